/**
 * The dashboard's read API (/api/v1/…) over one repository's own index: the same JSON shapes `aiflare serve`
 * answers for a project, so one page reads both.
 */
import type { Database } from "bun:sqlite";
import { AiflareError } from "../../errors.ts";
import type { Entry } from "../../store/entry.ts";
import { topChangedFiles, withIndex } from "../../store/index-db.ts";
import { readSession } from "../../store/sessions.ts";
import { isValidSessionId } from "../../util/ids.ts";
import { revParseCommit } from "../../util/git.ts";
import { landingCommits } from "../../store/index/links.ts";
import { linkedView } from "../history/linked.ts";
import { conversationLines } from "../../util/jsonl.ts";
import type { SessionHeading } from "./contract.ts";
import { buildFilter, type HistoryFilter } from "../history/filters.ts";
import {
  entriesByPrefix,
  entriesForPath,
  entriesOfSession,
  getEntries,
  getEntry,
  groupMembers,
  listEntries,
  sessionInfo,
  timelinePage,
} from "../history/query.ts";

/** An entry without its conversation, plus the id of its request group (the API's "Summary"). */
export type Summary = Omit<Entry, "conversationSnippet"> & { groupId: string };

const DAY_MS = 86_400_000;
const MAX_LIMIT = 200;

/** The entry as the list views send it. */
export function toSummary(entry: Entry): Summary {
  const { conversationSnippet: _omit, ...rest } = entry;
  return { ...rest, groupId: entry.groupRootId ?? entry.commitHash };
}

/** A 4xx answer with the contract's error body. */
class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

function json(body: unknown, status = 200): Response {
  return new Response(JSON.stringify(body), {
    status,
    headers: { "Content-Type": "application/json; charset=utf-8", "Cache-Control": "no-store", "X-Content-Type-Options": "nosniff" },
  });
}

/** The contract's error answer: `{"error": message}`. */
export function apiError(status: number, message: string): Response {
  return json({ error: message }, status);
}

function readLimit(text: string | null, fallback: number): number {
  if (text === null || text === "") return fallback;
  const n = Number(text);
  if (!Number.isInteger(n) || n < 1) throw new ApiError(400, `limit must be a positive whole number, not "${text}"`);
  return Math.min(n, MAX_LIMIT);
}

/** The timeline filters of a query string, validated like the history command's flags. */
function readFilter(params: URLSearchParams, root: string, now: Date): HistoryFilter {
  const get = (k: string) => params.get(k)?.trim() || undefined;
  const q = get("q");
  try {
    const filter = buildFilter(
      { tag: get("tag"), session: get("session"), file: get("file"), grep: q, since: get("since"), until: get("until") },
      { cwd: root, root, now },
    );
    const branch = get("branch");
    if (branch) filter.branch = branch;
    return filter;
  } catch (err) {
    if (err instanceof AiflareError) throw new ApiError(400, err.message.replace(/--grep/g, "q").replace(/--(\w+)/g, "$1"));
    throw err;
  }
}

function timeline(db: Database, params: URLSearchParams, root: string, now: Date): unknown {
  const limit = readLimit(params.get("limit"), 50);
  const filter = readFilter(params, root, now);
  const { entries: page, nextCursor } = timelinePage(db, { ...filter, limit }, params.get("cursor"));
  const ids = [...new Set(page.map((e) => e.claudeSessionId))];
  const info = sessionInfo(db, ids);
  const sessions: Record<string, SessionHeading> = {};
  for (const id of ids) {
    const s = info.get(id);
    const first = page.find((e) => e.claudeSessionId === id)!;
    sessions[id] = {
      firstRequest: s?.firstRequest ?? null,
      agentType: first.agentType,
      branch: first.branch,
      start: s ? new Date(s.fromMs).toISOString() : (first.committedAt ?? first.capturedAt),
      end: s ? new Date(s.toMs).toISOString() : (first.committedAt ?? first.capturedAt),
      commits: s?.entryCount ?? 1,
    };
  }
  return { entries: page.map(toSummary), nextCursor, sessions };
}

/**
 * The entry page's answer for a commit with no entry that contains recorded changes: `entry: null`, the link
 * and its parts' summaries (oldest first). Null when the commit is unknown or contains none.
 */
async function linkedAnswer(db: Database, repo: { root: string; commonDir: string }, ref: string): Promise<unknown> {
  const hash = revParseCommit(repo.root, ref);
  if (!hash) return null;
  const view = await linkedView(db, repo.commonDir, hash);
  if (!view) return null;
  return { entry: null, commitHash: hash, link: view.link, parts: view.parts.map(toSummary), group: [] };
}

async function entry(db: Database, repo: { root: string; commonDir: string }, ref: string): Promise<unknown> {
  if (!/^[0-9a-f]{4,40}$/i.test(ref)) throw new ApiError(400, "an entry is named by its commit hash (4 to 40 hex digits)");
  const found = entriesByPrefix(db, ref);
  if (found.length === 0) {
    // a squash or rebase-merge commit without an entry of its own: answered with its linked parts
    const linked = await linkedAnswer(db, repo, ref);
    if (linked) return linked;
    throw new ApiError(404, `no entry for commit ${ref}`);
  }
  if (found.length > 1) throw new ApiError(400, `${ref} matches several entries; give more of the hash`);
  const full = getEntry(db, found[0]!);
  if (!full) throw new ApiError(404, `no entry for commit ${ref}`);
  const members = groupMembers(db, full.groupRootId ?? full.commitHash).map((m) => m.commitHash);
  const docs = getEntries(db, members);
  const group = members.flatMap((h) => (docs.has(h) ? [toSummary(docs.get(h)!)] : []));
  return { entry: full, group };
}

function session(db: Database, id: string, stored: string | null): unknown {
  const entries = entriesOfSession(db, id).filter((e) => e.claudeSessionId === id);
  if (stored === null && entries.length === 0) throw new ApiError(404, `no session ${id}`);
  // A session stored before its end may lack the last deltas; the entries' own deltas fill in.
  const lines = conversationLines(stored ?? entries.map((e) => e.conversationSnippet).join("\n"));
  const cuts: { commitHash: string; afterLine: number }[] = [];
  let at = 0;
  for (const e of entries) {
    at += conversationLines(e.conversationSnippet).length;
    cuts.push({ commitHash: e.commitHash, afterLine: Math.min(at, lines.length) });
  }
  const transcript = lines.map((l) => `${JSON.stringify(l)}\n`).join("");
  return { sessionId: id, transcript, entries: entries.map(toSummary), cuts };
}

function files(db: Database, params: URLSearchParams, root: string, now: Date): unknown {
  const raw = params.get("path")?.trim() ?? "";
  const path = raw.replace(/^(\.\/)+/, "").replace(/\/+$/, "");
  if (!path) throw new ApiError(400, "path is required");
  const filter = readFilter(new URLSearchParams({ file: path }), root, now);
  const entries = entriesForPath(db, filter.file ?? path, 500);
  // the commits that landed these entries on the main line (squash, rebase-merge), where links are known
  const landedIn = landingCommits(db, entries.map((e) => e.commitHash));
  return { path, entries: entries.map(toSummary), ...(landedIn.size ? { landedIn: Object.fromEntries(landedIn) } : {}) };
}

function stats(db: Database, params: URLSearchParams, now: Date): unknown {
  const daysText = params.get("days");
  const days = daysText ? Number(daysText) : 28;
  if (!Number.isInteger(days) || days < 1 || days > 366) throw new ApiError(400, "days must be a whole number from 1 to 366");
  const today = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate());
  const sinceMs = today - (days - 1) * DAY_MS;
  const rows = listEntries(db, { sinceMs, limit: 0 });
  const perTag: Record<string, number> = {};
  const perDayMap = new Map<string, number>();
  for (let d = 0; d < days; d++) perDayMap.set(new Date(sinceMs + d * DAY_MS).toISOString().slice(0, 10), 0);
  for (const r of rows) {
    perTag[r.tag] = (perTag[r.tag] ?? 0) + 1;
    const day = new Date(r.capturedMs).toISOString().slice(0, 10);
    if (perDayMap.has(day)) perDayMap.set(day, perDayMap.get(day)! + 1);
  }
  return {
    entries: rows.length,
    sessions: new Set(rows.map((r) => r.sessionId)).size,
    perTag,
    perDay: [...perDayMap].map(([day, count]) => ({ day, count })),
    topFiles: topChangedFiles(db, sinceMs, 10),
  };
}

/**
 * Answers one read API request for the repository whose common git dir is `commonDir` (worktree root `root`).
 * Null when the path is not part of the read API.
 */
export async function answerLocalApi(url: URL, repo: { root: string; commonDir: string }, now = new Date()): Promise<Response | null> {
  const path = url.pathname;
  if (!path.startsWith("/api/v1/")) return null;
  const rest = path.slice("/api/v1/".length);
  const params = url.searchParams;
  try {
    // A transcript is read from the sessions branch itself (the index keeps only what lists and searches need).
    let transcript: string | null = null;
    if (rest.startsWith("sessions/")) {
      const id = decodeURIComponent(rest.slice("sessions/".length));
      if (!isValidSessionId(id)) throw new ApiError(400, "not a session id");
      transcript = await readSession(repo, id);
    }
    const body = await withIndex(repo.commonDir, (db) => {
      if (rest === "timeline") return timeline(db, params, repo.root, now);
      if (rest.startsWith("entries/")) return entry(db, repo, decodeURIComponent(rest.slice("entries/".length)));
      if (rest.startsWith("sessions/")) return session(db, decodeURIComponent(rest.slice("sessions/".length)), transcript);
      if (rest === "files") return files(db, params, repo.root, now);
      if (rest === "stats") return stats(db, params, now);
      throw new ApiError(404, `no such API path: ${path}`);
    });
    return json(body);
  } catch (err) {
    if (err instanceof ApiError) return apiError(err.status, err.message);
    if (err instanceof AiflareError && err.code === "INVALID_ARGUMENT") return apiError(400, err.message.replace(/--grep/g, "q"));
    if (err instanceof AiflareError && err.code === "NOT_FOUND") return apiError(404, err.message);
    return apiError(500, err instanceof Error ? err.message : String(err));
  }
}
