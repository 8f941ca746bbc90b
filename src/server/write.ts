/**
 * The write path behind the routes: a batch checked (ingest.ts), stored in short transactions with turns of the
 * event loop between them, and answered with what was stored and why the rest was not; transcripts likewise.
 */
import { isAiflareError } from "../errors.ts";
import { isValidSessionId } from "../util/ids.ts";
import { HttpError, json } from "./http.ts";
import {
  CHUNK_CHARS,
  MAX_BATCH_ENTRIES,
  MAX_BATCH_FILES,
  MAX_CLOCK_SKEW_MS,
  MAX_ENTRY_FILES,
  checkBatch,
  redactTranscript,
  timeSlicer,
  writeChunks,
  type CheckedRow,
  type IngestOptions,
  type Rejected,
  type Trimmed,
} from "./ingest.ts";
import type { Storage } from "./storage.ts";

/** An entry the server did not store because it holds a newer capture of the same commit. */
export interface Conflict {
  index: number;
  commitHash: string;
  reason: string;
  storedCapturedAt: string;
}

export interface IngestResult {
  /** the commits stored, in the order of the batch */
  commits: string[];
  rejected: Rejected[];
  conflicts: Conflict[];
  trimmed: Trimmed[];
}

/** The changed files a batch lists, each entry counted up to its cap: what MAX_BATCH_FILES bounds. */
export function listedFiles(captures: unknown[]): number {
  let n = 0;
  for (const c of captures) {
    const files = (c as { changedFiles?: unknown } | null)?.changedFiles;
    if (Array.isArray(files)) n += Math.min(files.length, MAX_ENTRY_FILES);
  }
  return n;
}

/** Checks and stores a batch for `projectId`; throws HttpError (400) for a batch refused whole. */
export async function ingest(storage: Storage, projectId: string, captures: unknown[], opts: IngestOptions): Promise<IngestResult> {
  if (captures.length > MAX_BATCH_ENTRIES) throw new HttpError(400, `at most ${MAX_BATCH_ENTRIES} entries per batch, not ${captures.length}`);
  const files = listedFiles(captures);
  if (files > MAX_BATCH_FILES) {
    throw new HttpError(
      400,
      `at most ${MAX_BATCH_FILES} changed files per batch (each entry counted up to ${MAX_ENTRY_FILES}), not ${files}; send fewer entries per request`,
    );
  }
  const pause = timeSlicer();
  const stored = new Set<string>();
  const conflicts: Conflict[] = [];
  const maxChars = storage.writesAside ? CHUNK_CHARS.aside : CHUNK_CHARS.holding;
  async function write(rows: CheckedRow[]) {
    for (const chunk of writeChunks(rows, maxChars)) {
      await pause();
      const r = await storage.putEntries(
        projectId,
        chunk.map((c) => c.row),
        opts.nowMs + MAX_CLOCK_SKEW_MS,
      );
      for (const h of r.stored) stored.add(h);
      const indexOf = new Map(chunk.map((c) => [c.row.commitHash, c.index]));
      for (const c of r.conflicts) {
        const storedCapturedAt = new Date(c.storedCapturedMs).toISOString();
        conflicts.push({
          index: indexOf.get(c.commitHash)!,
          commitHash: c.commitHash,
          reason: `the server holds a newer capture of this commit (captured ${storedCapturedAt})`,
          storedCapturedAt,
        });
      }
    }
  }
  let checked: Awaited<ReturnType<typeof checkBatch>>;
  if (storage.writesAside && captures.length > 2 * LEAD_ENTRIES && !repeatsHash(captures)) {
    // the database writes the first entries while the rest are checked (no commit twice in the batch, so that the
    // rest cannot replace a row already written: the newer capture of a commit sent twice wins within a batch)
    const head = await checkBatch(captures, opts, pause, 0, LEAD_ENTRIES);
    const writing = write(head.rows);
    writing.catch(() => {}); // awaited below; a failure is not unhandled while the rest are checked
    const tail = await checkBatch(captures, opts, pause, LEAD_ENTRIES);
    await writing;
    await write(tail.rows);
    checked = { rows: [...head.rows, ...tail.rows], rejected: [...head.rejected, ...tail.rejected], trimmed: [...head.trimmed, ...tail.trimmed] };
  } else {
    checked = await checkBatch(captures, opts, pause);
    await write(checked.rows);
  }
  const { rows, rejected, trimmed } = checked;
  conflicts.sort((a, b) => a.index - b.index);
  return { commits: rows.map((r) => r.row.commitHash).filter((h) => stored.has(h)), rejected, conflicts, trimmed };
}

/**
 * Where writes run aside (PostgreSQL), a batch of more than twice this many entries has its first ones written while
 * the rest are checked: the checks of the rest (about 0.2 ms of CPU an entry of 5 KB, the redactor included) take
 * no longer than that first transaction, which costs one more commit.
 */
const LEAD_ENTRIES = 10;

/** Whether two entries of a batch name the same commit. */
function repeatsHash(captures: unknown[]): boolean {
  const seen = new Set<unknown>();
  for (const c of captures) {
    const hash = (c as { commitHash?: unknown } | null)?.commitHash;
    if (typeof hash !== "string") continue;
    if (seen.has(hash)) return true;
    seen.add(hash);
  }
  return false;
}

/**
 * The answer to a write: 200 when every entry was stored; otherwise 400 (some refused as bad data) or 409 (some lost
 * to a newer stored capture), with `commits` listing what was stored and `rejected` / `conflicts` saying why the rest
 * was not. Never "accepted" for what was not stored.
 */
export function ingestAnswer(r: IngestResult, sent: number): Response {
  const base = { accepted: r.commits.length, commits: r.commits, ...(r.trimmed.length ? { trimmed: r.trimmed } : {}) };
  const problems = [...r.rejected, ...r.conflicts];
  if (problems.length === 0) return json(base);
  const first = problems[0]!;
  const verb = r.conflicts.length ? "not stored" : "refused";
  const message =
    sent === 1
      ? `entry ${verb}: ${first.reason}`
      : `${problems.length} of ${sent} entries ${verb}; entry ${first.index}${first.commitHash ? ` (${first.commitHash.slice(0, 12)})` : ""}: ${first.reason}`;
  return json(
    {
      error: message,
      ...base,
      ...(r.rejected.length ? { rejected: r.rejected } : {}),
      ...(r.conflicts.length ? { conflicts: r.conflicts } : {}),
    },
    r.rejected.length ? 400 : 409,
  );
}

/** Checks, redacts and stores a session transcript; throws HttpError (400) for one that cannot be stored. */
export async function storeTranscript(storage: Storage, projectId: string, sessionId: unknown, content: unknown, opts: IngestOptions): Promise<void> {
  if (!isValidSessionId(sessionId)) throw new HttpError(400, "claudeSessionId: not a valid session id");
  if (typeof content !== "string") throw new HttpError(400, "content: must be a string");
  if (content.includes("\0")) throw new HttpError(400, "content: holds a NUL character");
  let text = content;
  if (opts.redact !== false) {
    try {
      text = await redactTranscript(content);
    } catch (err) {
      if (!isAiflareError(err, "REDACTION_REFUSED")) throw err;
      throw new HttpError(400, `content: a ${String(err.data?.kind ?? "secret")} is still present after redaction; not stored`);
    }
  }
  await storage.putSession(projectId, sessionId as string, text);
}
