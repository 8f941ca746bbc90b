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
  WriteRoom,
  type CheckedRow,
  type IngestOptions,
  type Rejected,
  type Trimmed,
} from "./ingest.ts";
import type { EntryRow, PutResult, Storage } from "./storage.ts";

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
  const trustUntilMs = opts.nowMs + MAX_CLOCK_SKEW_MS;
  /** What one write of `chunk` stored, and which of its rows lost to a newer stored capture. */
  function record(r: PutResult, chunk: CheckedRow[]) {
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
  async function write(rows: CheckedRow[]) {
    for (const chunk of writeChunks(rows, maxChars)) {
      await pause();
      record(await storage.putEntries(projectId, chunk.map((c) => c.row), trustUntilMs), chunk);
    }
  }
  let checked: Checked;
  if (storage.putEntriesStreamed && captures.length > 1 && !repeatsHash(captures) && captures.every(sentWithGroup)) {
    checked = await streamed(storage, projectId, captures, opts, pause, { maxChars, trustUntilMs, record, write });
  } else if (storage.writesAside && captures.length > 2 * LEAD_ENTRIES && !repeatsHash(captures)) {
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

type Checked = Awaited<ReturnType<typeof checkBatch>>;

/** Whether an entry names its group (`groupRootId`, null included): one without is the server's to group. */
const sentWithGroup = (c: unknown) => c !== null && typeof c === "object" && "groupRootId" in c;

/** The commit hash an entry claims, for ordering ("" when it has none: it is refused when checked). */
const claimedHash = (c: unknown) => {
  const h = (c as { commitHash?: unknown } | null)?.commitHash;
  return typeof h === "string" ? h : "";
};

/** The entries checked first in a streamed write: the database starts on them while the next ones are checked. */
const FIRST_STREAMED = 5;
/** Each step of a streamed write checks this many times the entries of the one before. */
const STREAM_GROWTH = 2;

/**
 * A batch written as it is checked (storage.putEntriesStreamed): its entries in commit-hash order (the order every
 * writer locks rows in), checked in steps that double (5, 10, 20, …), each step's rows handed to the one transaction
 * as soon as they are checked, so that the checks of a step run while the database writes the step before. Rows past
 * what one transaction holds (WriteRoom) end the stream; they and the entries not yet checked are written as usual.
 */
async function streamed(
  storage: Storage,
  projectId: string,
  captures: unknown[],
  opts: IngestOptions,
  pause: () => Promise<void>,
  w: { maxChars: number; trustUntilMs: number; record: (r: PutResult, chunk: CheckedRow[]) => void; write: (rows: CheckedRow[]) => Promise<void> },
): Promise<Checked> {
  const order = captures.map((_, i) => i).sort((a, b) => {
    const x = claimedHash(captures[a]);
    const y = claimedHash(captures[b]);
    return x < y ? -1 : x > y ? 1 : a - b;
  });
  const inOrder = order.map((i) => captures[i]);
  const all: Checked = { rows: [], rejected: [], trimmed: [] };
  /** checks the entries from `from` to `to` of the hash order; their rows, under the batch's own indices */
  const check = async (from: number, to = inOrder.length): Promise<CheckedRow[]> => {
    const part = await checkBatch(inOrder, opts, pause, from, to);
    for (const r of part.rejected) all.rejected.push({ ...r, index: order[r.index]! });
    for (const t of part.trimmed) all.trimmed.push({ ...t, index: order[t.index]! });
    return part.rows.map((r) => ({ index: order[r.index]!, row: r.row }));
  };
  const sent: CheckedRow[] = [];
  let left: CheckedRow[] = [];
  let at = 0;
  const room = new WriteRoom(w.maxChars);
  async function* steps(): AsyncGenerator<EntryRow[]> {
    for (let step = FIRST_STREAMED; at < inOrder.length; step *= STREAM_GROWTH) {
      const to = Math.min(at + step, inOrder.length);
      const rows = await check(at, to);
      at = to;
      if (!room.take(rows.map((r) => r.row))) {
        left = rows;
        return;
      }
      sent.push(...rows);
      yield rows.map((r) => r.row);
    }
  }
  w.record(await storage.putEntriesStreamed!(projectId, steps(), w.trustUntilMs), sent);
  const rest = [...left, ...(at < inOrder.length ? await check(at) : [])];
  await w.write(rest);
  // answered in the batch's order, as the other ways of writing answer
  const byIndex = <T extends { index: number }>(list: T[]) => list.sort((a, b) => a.index - b.index);
  return { rows: byIndex([...sent, ...rest]), rejected: byIndex(all.rejected), trimmed: byIndex(all.trimmed) };
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
