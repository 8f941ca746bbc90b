import * as v from "valibot";
import { isAiflareError } from "../../errors.ts";
import { assertPlainIdentifier, redactForWrite, redactValueForWrite, type RedactOptions, type SecretMemory } from "../../redact/index.ts";
import { entrySchema } from "../../store/entry.ts";
import { isValidSessionId } from "../session.ts";
import { batchOutcome } from "./answer.ts";
import type { SendResult, SyncClient } from "./client.ts";
import type { PendingSession, SyncSource } from "./source.ts";

/** At most this many entries per `POST /captures/batch` (SPEC §7). */
export const MAX_BATCH_ENTRIES = 100;
/** A batch is also closed before its body passes this size, so long conversations do not make huge requests. */
export const MAX_BATCH_BYTES = 4 * 1024 * 1024;
/** …and before it lists more changed files than `aiflare serve` takes in one batch (each entry counted up to 1,000). */
export const MAX_BATCH_FILES = 10_000;
const MAX_ENTRY_FILES = 1_000;

export interface SyncRequest {
  /** full commit hashes; absent = everything pending */
  commits?: string[];
  /** send again what the backend already accepted */
  all?: boolean;
  dryRun?: boolean;
  /** commits come from a push: those without an entry are expected and not reported */
  quietMissing?: boolean;
}

export interface SyncDeps {
  source: SyncSource;
  /** required unless dry-run */
  client?: SyncClient;
  redact?: RedactOptions;
  /** the secrets found so far in a session still live here, redacted wherever its entries and transcript repeat them */
  knownSecrets?: (sessionId: string) => SecretMemory | undefined;
  now?: () => Date;
  /** called after each request with the number of entries handled so far */
  onProgress?: (done: number, total: number) => void;
  /** requests in flight at once (default 3) */
  concurrency?: number;
}

/** One entry or session skipped or failed, with why. Never holds content. */
export interface SyncIssue {
  kind: "entry" | "session";
  id: string;
  reason: string;
}

export interface SyncCounts {
  sent: number;
  skipped: number;
  failed: number;
}

export interface SyncPlan {
  entries: { commitHash: string; title: string; bytes: number }[];
  sessions: { id: string; bytes: number }[];
  batches: number;
}

export interface SyncSummary {
  dryRun: boolean;
  entries: SyncCounts;
  sessions: SyncCounts;
  skipped: SyncIssue[];
  failed: SyncIssue[];
  /** why sending stopped early (bad key, no project, backend unavailable) */
  stopped?: string;
  requests: number;
  durationMs: number;
  /** dry-run only: what would be sent */
  plan?: SyncPlan;
}

interface Prepared {
  commitHash: string;
  version: string;
  sessionId: string;
  title: string;
  body: string;
  /** changed files, as the server counts them against its batch cap */
  files: number;
}

/** Validates and redacts one stored entry into the JSON text that goes on the wire. */
function prepareEntry(
  p: { commitHash: string; version: string; raw: string },
  redact: RedactOptions,
  knownSecrets: SyncDeps["knownSecrets"],
): Prepared | { skip: string } | { fail: string } {
  let parsed: unknown;
  try {
    parsed = JSON.parse(p.raw);
  } catch {
    return { skip: "stored entry is not valid JSON" };
  }
  const r = v.safeParse(entrySchema(), parsed);
  if (!r.success) {
    const issue = r.issues[0];
    const path = v.getDotPath(issue);
    return { skip: `stored entry is invalid (${path ? `${path}: ` : ""}${issue.message})` };
  }
  if (r.output.commitHash !== p.commitHash) return { skip: "stored entry names another commit" };
  let entry;
  try {
    entry = redactValueForWrite(r.output, { ...redact, known: knownSecrets?.(r.output.claudeSessionId) });
  } catch (err) {
    if (isAiflareError(err, "REDACTION_REFUSED")) return { fail: "not sent: a secret is still present after redaction" };
    throw err;
  }
  return {
    commitHash: p.commitHash,
    version: p.version,
    sessionId: r.output.claudeSessionId,
    title: entry.title,
    body: JSON.stringify(entry),
    files: Math.min(entry.changedFiles.length, MAX_ENTRY_FILES),
  };
}

/** Groups prepared entries into batches of ≤ MAX_BATCH_ENTRIES, ≤ MAX_BATCH_BYTES and ≤ MAX_BATCH_FILES. */
export function toBatches<T extends { body: string; files?: number }>(
  items: T[],
  maxEntries = MAX_BATCH_ENTRIES,
  maxBytes = MAX_BATCH_BYTES,
  maxFiles = MAX_BATCH_FILES,
): T[][] {
  const batches: T[][] = [];
  let cur: T[] = [];
  let bytes = 0;
  let files = 0;
  for (const it of items) {
    const size = Buffer.byteLength(it.body) + 1;
    const n = it.files ?? 0;
    if (cur.length > 0 && (cur.length >= maxEntries || bytes + size > maxBytes || files + n > maxFiles)) {
      batches.push(cur);
      cur = [];
      bytes = 0;
      files = 0;
    }
    cur.push(it);
    bytes += size;
    files += n;
  }
  if (cur.length) batches.push(cur);
  return batches;
}

/** Runs `count` tasks, the first alone, then at most `n` in flight; a task may call `stop()` so that no new ones start. */
async function pool(n: number, count: number, task: (i: number) => Promise<void>, stopped: () => boolean): Promise<void> {
  if (count === 0) return;
  // The first request goes alone: a bad key or a dead backend then costs one request, not n.
  await task(0);
  let next = 1;
  const worker = async () => {
    while (next < count && !stopped()) await task(next++);
  };
  await Promise.all(Array.from({ length: Math.min(n, count) }, worker));
}

/** A summary of nothing sent yet. */
export function emptySummary(dryRun: boolean): SyncSummary {
  return {
    dryRun,
    entries: { sent: 0, skipped: 0, failed: 0 },
    sessions: { sent: 0, skipped: 0, failed: 0 },
    skipped: [],
    failed: [],
    requests: 0,
    durationMs: 0,
  };
}

/**
 * Sends pending entries (or those of `commits`) in batches, then the transcripts of their sessions,
 * remembering what the backend accepted. Network trouble never throws: it ends up in the summary.
 */
export async function runSync(req: SyncRequest, deps: SyncDeps): Promise<SyncSummary> {
  const started = performance.now();
  const now = deps.now ?? (() => new Date());
  const redact = deps.redact ?? {};
  const { source } = deps;
  const summary = emptySummary(req.dryRun === true);
  const skip = (kind: SyncIssue["kind"], id: string, reason: string) => {
    summary[kind === "entry" ? "entries" : "sessions"].skipped++;
    summary.skipped.push({ kind, id, reason });
  };
  const fail = (kind: SyncIssue["kind"], id: string, reason: string) => {
    summary[kind === "entry" ? "entries" : "sessions"].failed++;
    summary.failed.push({ kind, id, reason });
  };

  try {
    const sel = source.entries({ commits: req.commits, includeAccepted: req.all });
    if (req.commits) for (const a of sel.accepted) skip("entry", a.commitHash, "already sent");
    if (!req.quietMissing) for (const m of sel.missing) skip("entry", m, "no entry captured for this commit");

    const prepared: Prepared[] = [];
    for (const p of sel.pending) {
      const r = prepareEntry(p, redact, deps.knownSecrets);
      if ("skip" in r) skip("entry", p.commitHash, r.skip);
      else if ("fail" in r) fail("entry", p.commitHash, r.fail);
      else prepared.push(r);
    }
    const batches = toBatches(prepared);
    const alreadyAcceptedSessions = sel.accepted.map((a) => a.sessionId).filter((s): s is string => !!s);

    if (req.dryRun) {
      const ids = new Set([...prepared.map((p) => p.sessionId), ...alreadyAcceptedSessions]);
      const sessions = planSessions(source, prepared, ids, req, skip);
      summary.plan = {
        entries: prepared.map((p) => ({ commitHash: p.commitHash, title: p.title, bytes: Buffer.byteLength(p.body) })),
        sessions: sessions.map((s) => ({ id: s.id, bytes: s.bytes })),
        batches: batches.length,
      };
      return summary;
    }

    const client = deps.client;
    if (!client) throw new Error("runSync: a client is required unless dry-run");
    const concurrency = Math.max(1, deps.concurrency ?? 3);
    let stopReason: string | undefined;
    const stop = (r: SendResult & { ok: false }) => {
      stopReason ??= r.message;
    };

    // 1. entries, in batches
    const acceptedNow: Prepared[] = [];
    const unsent = new Set(batches.map((_, i) => i));
    let handled = 0;
    await pool(
      concurrency,
      batches.length,
      async (i) => {
        const batch = batches[i]!;
        unsent.delete(i);
        const body = `{"captures":[${batch.map((b) => b.body).join(",")}]}`;
        summary.requests++;
        const r = await client.postBatch(body);
        const at = now().toISOString();
        const outcome = batchOutcome(batch, r);
        if (outcome) {
          // the answer says entry by entry what was stored: only that counts as sent
          if (outcome.stored.length) {
            source.markEntriesAccepted(outcome.stored, at);
            acceptedNow.push(...outcome.stored);
            summary.entries.sent += outcome.stored.length;
          }
          const byReason = new Map<string, string[]>();
          for (const n of outcome.notStored) {
            fail("entry", n.item.commitHash, n.reason);
            byReason.set(n.reason, [...(byReason.get(n.reason) ?? []), n.item.commitHash]);
          }
          for (const [reason, hashes] of byReason) source.recordFailure(hashes, reason, at);
        } else if (r.ok) {
          source.markEntriesAccepted(batch, at);
          acceptedNow.push(...batch);
          summary.entries.sent += batch.length;
        } else {
          if (r.kind !== "rejected") stop(r);
          const reason = r.kind === "rejected" ? `batch of ${batch.length}: ${r.message}` : r.message;
          for (const b of batch) fail("entry", b.commitHash, reason);
          source.recordFailure(
            batch.map((b) => b.commitHash),
            reason,
            at,
          );
        }
        handled += batch.length;
        deps.onProgress?.(handled, prepared.length);
      },
      () => stopReason !== undefined,
    );
    if (stopReason !== undefined && unsent.size > 0) {
      const notSent = [...unsent].flatMap((i) => batches[i]!);
      for (const b of notSent) fail("entry", b.commitHash, `not sent: ${stopReason}`);
      source.recordFailure(
        notSent.map((b) => b.commitHash),
        stopReason,
        now().toISOString(),
      );
    }

    // 2. the transcripts of the sessions whose entries the backend has
    if (stopReason === undefined) {
      const ids = new Set([...acceptedNow.map((p) => p.sessionId), ...alreadyAcceptedSessions]);
      const sessions = planSessions(source, acceptedNow, ids, req, skip);
      await pool(
        concurrency,
        sessions.length,
        async (i) => {
          const s = sessions[i]!;
          let content: string;
          try {
            // the id goes into the body as it is: it must not be secret-shaped itself
            assertPlainIdentifier(s.id, redact);
          } catch (err) {
            if (!isAiflareError(err, "REDACTION_REFUSED")) throw err;
            fail("session", "(withheld id)", `not sent: the session id looks like a ${String(err.data?.kind)}`);
            return;
          }
          try {
            content = redactForWrite(source.readSession(s), { ...redact, jsonl: true, known: deps.knownSecrets?.(s.id) });
          } catch (err) {
            if (!isAiflareError(err, "REDACTION_REFUSED")) throw err;
            fail("session", s.id, "not sent: a secret is still present after redaction");
            return;
          }
          summary.requests++;
          const r = await client.putSession(JSON.stringify({ claudeSessionId: s.id, content }));
          if (r.ok) {
            source.markSessionAccepted(s.id, s.version, now().toISOString());
            summary.sessions.sent++;
          } else {
            if (r.kind !== "rejected") stop(r);
            fail("session", s.id, r.message);
            source.recordFailure([], `session ${s.id}: ${r.message}`, now().toISOString());
          }
        },
        () => stopReason !== undefined,
      );
    }
    // 3. links of squash and rebase-merge commits (hashes and numbers only), once per version of them
    if (stopReason === undefined && client.postLinks && source.links) {
      const links = source.links({ includeAccepted: req.all });
      let ok = links !== null;
      for (let i = 0; links && i < links.texts.length && ok; i += MAX_BATCH_ENTRIES) {
        summary.requests++;
        const r = await client.postLinks(`{"links":[${links.texts.slice(i, i + MAX_BATCH_ENTRIES).join(",")}]}`);
        // a backend without the links endpoint (an older server) is not an error of this run
        if (!r.ok) ok = false;
      }
      if (links && ok) source.markLinksAccepted?.(links.version);
    }
    summary.stopped = stopReason;
    if (summary.failed.length === 0) source.clearLastError();
    return summary;
  } finally {
    summary.durationMs = Math.round(performance.now() - started);
  }
}

/** The stored transcripts to send for `ids`; reports sessions of this run's entries that have none. */
function planSessions(
  source: SyncSource,
  entries: Prepared[],
  ids: Set<string>,
  req: SyncRequest,
  skip: (kind: "session", id: string, reason: string) => void,
): PendingSession[] {
  const ofThisRun = new Set(entries.map((e) => e.sessionId));
  const valid = [...ids].filter((id) => {
    if (isValidSessionId(id)) return true;
    if (ofThisRun.has(id)) skip("session", "(invalid id)", "the entry's session id is not a valid id");
    return false;
  });
  const sel = source.sessions(valid, { includeAccepted: req.all });
  for (const m of sel.missing) if (ofThisRun.has(m)) skip("session", m, "no transcript stored for this session");
  return sel.pending;
}
