/** What the write API accepts: entries checked with the client's own schema, turned into storage rows. */
import * as v from "valibot";
import { EntrySchema, entryTimes, UNTAGGED, type Entry } from "../store/entry.ts";
import { isValidSessionId } from "../util/ids.ts";
import { conversationLines } from "../util/jsonl.ts";
import type { EntryRow } from "./storage.ts";

/** At most this many entries per batch (SPEC §7). */
export const MAX_BATCH_ENTRIES = 100;
/** One entry's JSON may not be larger than this. */
export const MAX_ENTRY_BYTES = 4 * 1024 * 1024;
/** How much of an entry's text the full-text index holds (PostgreSQL's tsvector has a 1 MB ceiling). */
const MAX_SEARCH_CHARS = 200_000;
const MAX_REQUEST_CHARS = 300;

/** The entry schema of the client, except that `groupRootId` may be absent: then the server groups (SPEC §5). */
const IncomingSchema = v.looseObject({ ...EntrySchema.entries, groupRootId: v.optional(v.nullable(EntrySchema.entries.groupRootId)) });

export interface Rejected {
  index: number;
  commitHash?: string;
  reason: string;
}

/** The time of an ISO-8601 string in ms, or null. */
function timeOf(text: string | undefined): number | null {
  if (!text) return null;
  const ms = Date.parse(text);
  return Number.isFinite(ms) ? ms : null;
}

/**
 * Checks one incoming entry; a row to store, or why not. `keyOwner` is who the sending key belongs to: the server
 * records it beside the author the client claims, and never takes a `keyOwner` from the client.
 */
export function checkEntry(raw: unknown, keyOwner: string | null = null): { row: EntryRow } | { reason: string } {
  const r = v.safeParse(IncomingSchema, raw);
  if (!r.success) {
    const issue = r.issues[0];
    const path = v.getDotPath(issue);
    return { reason: `${path ?? "entry"}: ${issue.message}` };
  }
  const e = r.output as Entry & { groupRootId?: string | null };
  const json = JSON.stringify(e);
  if (json.includes("\\u0000")) return { reason: "a string holds a NUL character" };
  if (json.length > MAX_ENTRY_BYTES) return { reason: `the entry is larger than ${MAX_ENTRY_BYTES / 1024 / 1024} MiB` };
  if (!isValidSessionId(e.claudeSessionId)) return { reason: "claudeSessionId: not a valid session id" };
  const capturedMs = timeOf(e.capturedAt);
  if (capturedMs === null) return { reason: "capturedAt: not an ISO-8601 date" };
  if (e.committedAt !== undefined && timeOf(e.committedAt) === null) return { reason: "committedAt: not an ISO-8601 date" };
  if (e.recordedAt !== undefined && timeOf(e.recordedAt) === null) return { reason: "recordedAt: not an ISO-8601 date" };
  const lines = conversationLines(e.conversationSnippet);
  const firstUser = lines.find((l) => l.role === "user")?.content.trim();
  const { conversationSnippet, groupRootId, keyOwner: _claimed, ...rest } = e as typeof e & { keyOwner?: unknown };
  const author = typeof e.author === "string" && e.author.trim() ? e.author : null;
  const times = entryTimes(e);
  return {
    row: {
      commitHash: e.commitHash,
      sessionId: e.claudeSessionId,
      branch: e.branch,
      tag: e.tag ?? UNTAGGED,
      capturedMs,
      sortMs: times.ms,
      recordedMs: times.recordedMs,
      groupRootId: "groupRootId" in (raw as object) ? (groupRootId ?? null) : undefined,
      hasUser: firstUser !== undefined,
      continuation: e.continuation,
      request: firstUser ? firstUser.slice(0, MAX_REQUEST_CHARS) : null,
      author,
      keyOwner,
      summary: JSON.stringify(keyOwner ? { ...rest, keyOwner } : rest),
      conversation: conversationSnippet,
      searchText: [e.title, e.intent, e.alternatives, e.diffSummary, lines.map((l) => l.content).join("\n")].join("\n").slice(0, MAX_SEARCH_CHARS),
      files: [...new Set(e.changedFiles)],
    },
  };
}

/** Splits a batch body into the rows to store and the entries refused, each with its index, hash and reason. */
export function checkBatch(captures: unknown[], keyOwner: string | null = null): { rows: EntryRow[]; rejected: Rejected[] } {
  const rows: EntryRow[] = [];
  const rejected: Rejected[] = [];
  const seen = new Map<string, number>();
  captures.forEach((raw, index) => {
    const r = checkEntry(raw, keyOwner);
    if ("reason" in r) {
      const hash = (raw as { commitHash?: unknown } | null)?.commitHash;
      rejected.push({ index, ...(typeof hash === "string" && hash.length <= 64 ? { commitHash: hash } : {}), reason: r.reason });
      return;
    }
    // the same commit twice in one batch: the newer capture wins, as across batches
    const at = seen.get(r.row.commitHash);
    if (at === undefined) {
      seen.set(r.row.commitHash, rows.length);
      rows.push(r.row);
    } else if (r.row.capturedMs >= rows[at]!.capturedMs) rows[at] = r.row;
  });
  return { rows, rejected };
}
