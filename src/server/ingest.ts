/**
 * What the write API accepts: entries checked with the client's own schema, redacted again, turned into storage
 * rows; transcripts redacted again; the caps that keep one client's writes from holding up everyone else's.
 */
import * as v from "valibot";
import { isAiflareError } from "../errors.ts";
import { redactForWriteStream, redactValueForWrite, redactValuesForWrite } from "../redact/index.ts";
import { entrySchema, entryTimes, UNTAGGED, type Entry } from "../store/entry.ts";
import { isValidSessionId } from "../util/ids.ts";
import { conversationLines, conversationRecords, parseJsonl } from "../util/jsonl.ts";
import type { EntryRow } from "./storage.ts";

/** At most this many entries per batch (SPEC §7). */
export const MAX_BATCH_ENTRIES = 100;
/** One entry's JSON may not be larger than this. */
export const MAX_ENTRY_BYTES = 4 * 1024 * 1024;
/** An entry keeps at most this many changed files; the rest are dropped and counted in `changedFilesTotal`. */
export const MAX_ENTRY_FILES = 1_000;
/** A batch holds at most this many changed files in all (after each entry's cap); more is refused whole. */
export const MAX_BATCH_FILES = 10_000;
/** A changed file's path may not be longer than this (Linux's PATH_MAX). */
export const MAX_PATH_CHARS = 4_096;
/** How far ahead of the server's clock a `capturedAt` may be; later ones are refused (they would win every write). */
export const MAX_CLOCK_SKEW_MS = 5 * 60_000;
/** How much of an entry's text the full-text index holds (PostgreSQL's tsvector has a 1 MB ceiling). */
const MAX_SEARCH_CHARS = 200_000;
const MAX_REQUEST_CHARS = 300;
/** One storage transaction holds at most this many entries and file rows … */
const CHUNK_ENTRIES = MAX_BATCH_ENTRIES;
const CHUNK_FILES = 1_000;
/**
 * … and characters of text: a few milliseconds of work where the transaction holds the event loop (SQLite); where
 * the process only waits for the database (PostgreSQL), a batch of 100 entries of a few KB is one transaction (one
 * commit, one run of each trigger statement) rather than four, and a body at the caps still several.
 */
export const CHUNK_CHARS = { holding: 256 * 1024, aside: 2 * 1024 * 1024 };
/** The longest stretch of synchronous work between two turns of the event loop. */
const SLICE_MS = 4;

/** The entry schema of the client, except that `groupRootId` may be absent: then the server groups (SPEC §5). */
const IncomingSchema = v.looseObject({ ...entrySchema().entries, groupRootId: v.optional(v.nullable(entrySchema().entries.groupRootId)) });

export interface Rejected {
  index: number;
  commitHash?: string;
  reason: string;
}

/** An entry stored with fewer changed files than it listed. */
export interface Trimmed {
  index: number;
  commitHash: string;
  changedFiles: number;
  kept: number;
}

export interface IngestOptions {
  /** the server's clock, in ms */
  nowMs: number;
  /** run the redactor over what is stored (default true; off only to measure what it costs) */
  redact?: boolean;
  /**
   * who the sending key belongs to: the server records it beside the author the client claims, and never takes a
   * `keyOwner` from the client
   */
  keyOwner?: string | null;
}

/** The time of an ISO-8601 string in ms, or null. */
function timeOf(text: string | undefined): number | null {
  if (!text) return null;
  const ms = Date.parse(text);
  return Number.isFinite(ms) ? ms : null;
}

/**
 * A function to await between pieces of synchronous work: it gives the event loop a turn once `SLICE_MS` have
 * passed since the last one, so that other requests are answered while a large body is checked and written.
 */
export function timeSlicer(sliceMs = SLICE_MS): () => Promise<void> {
  let since = performance.now();
  return async () => {
    if (performance.now() - since < sliceMs) return;
    await new Promise<void>((resolve) => setImmediate(resolve));
    since = performance.now();
  };
}

/**
 * The delta through the redactor a line at a time: each JSON line decoded natively and its strings redacted (as the
 * JSONL redactor does, without its own JSON scanner), kept byte for byte when nothing changed. The lines go to the
 * redactor together, so that the strings it provably leaves as they are cost one scan in all. With the delta
 * unchanged, also its records as `parseJsonl` reads them, so that they are not parsed again.
 */
function redactSnippet(snippet: string): { snippet: string; records?: unknown[] } {
  const lines = snippet.split("\n");
  const values: unknown[] = [];
  const json: boolean[] = [];
  for (const line of lines) {
    let rec: unknown = line;
    let parsed = false;
    if (line !== "") {
      try {
        rec = JSON.parse(line);
        parsed = true;
      } catch {}
    }
    values.push(rec);
    json.push(parsed);
  }
  const r = redactValuesForWrite(values);
  if (!r.changed.includes(true)) {
    // a line JSON.parse reads is one value, with only JSON white space around it: what parseJsonl reads in it too
    const records: unknown[] = [];
    for (let i = 0; i < lines.length; i++) {
      if (json[i]) records.push(values[i]);
      else for (const rec of parseJsonl(lines[i]!)) records.push(rec);
    }
    return { snippet, records };
  }
  return { snippet: lines.map((line, i) => (!r.changed[i] ? line : json[i] ? JSON.stringify(r.values[i]) : (r.values[i] as string))).join("\n") };
}

/**
 * The redactor over every string of an entry (the delta apart, with `pause` before it); why not, when a secret
 * survives it or an identifier would change. With the delta unchanged, also its records (see `redactSnippet`).
 */
async function redactEntry(e: Entry, pause: () => Promise<void>): Promise<{ entry: Entry; records?: unknown[] } | { reason: string }> {
  let out: Entry;
  let records: unknown[] | undefined;
  try {
    const { conversationSnippet, ...fields } = e;
    const redacted = redactValueForWrite(fields);
    await pause();
    const snippet = redactSnippet(conversationSnippet);
    records = snippet.records;
    out = { ...redacted, conversationSnippet: snippet.snippet } as Entry;
  } catch (err) {
    if (isAiflareError(err, "REDACTION_REFUSED")) return { reason: `a ${String(err.data?.kind ?? "secret")} is still present after redaction` };
    throw err;
  }
  // the hash and the session id name things: one the redactor would change cannot be stored under either name
  if (out.commitHash !== e.commitHash) return { reason: "commitHash: looks like a secret" };
  if (out.claudeSessionId !== e.claudeSessionId) return { reason: "claudeSessionId: looks like a secret" };
  return { entry: out, records };
}

/** The longest JSON a number, boolean or null is written as (`-1.2345678901234567e-308`). */
const MAX_SCALAR_JSON = 24;

/**
 * What `JSON.stringify(value)` would show, without writing it (for an entry of a few KB that is most of the cost of
 * its checks beside the redactor): whether it holds the text `\u0000` (a NUL character, or a backslash followed by
 * `u0000`, which JSON writes as `\\u0000`), and a length it cannot exceed (a character takes at most six, `\u001f`).
 */
export function jsonFacts(value: unknown): { nul: boolean; maxLength: number } {
  let nul = false;
  let maxLength = 0;
  const text = (s: string) => {
    maxLength += 2 + 6 * s.length;
    if (!nul && (s.includes("\0") || s.includes("\\u0000"))) nul = true;
  };
  const stack: unknown[] = [value];
  while (stack.length) {
    const v = stack.pop();
    if (typeof v === "string") text(v);
    else if (Array.isArray(v)) {
      maxLength += 2 + v.length;
      for (const x of v) stack.push(x === undefined ? null : x);
    } else if (v !== null && typeof v === "object") {
      maxLength += 2;
      for (const [k, x] of Object.entries(v)) {
        // JSON leaves out a key whose value is undefined
        if (x === undefined) continue;
        text(k);
        maxLength += 2;
        stack.push(x);
      }
    } else maxLength += MAX_SCALAR_JSON;
  }
  return { nul, maxLength };
}

/** Checks one incoming entry; a row to store (and how many files it listed, when trimmed), or why not. */
export async function checkEntry(
  raw: unknown,
  opts: IngestOptions,
  pause: () => Promise<void> = timeSlicer(),
): Promise<{ row: EntryRow; listedFiles?: number } | { reason: string }> {
  const r = v.safeParse(IncomingSchema, raw);
  if (!r.success) {
    const issue = r.issues[0];
    const path = v.getDotPath(issue);
    return { reason: `${path ?? "entry"}: ${issue.message}` };
  }
  let e = r.output as Entry & { groupRootId?: string | null };
  const json = jsonFacts(e);
  if (json.nul) return { reason: "a string holds a NUL character" };
  // the bound is far above the JSON's length of an ordinary entry: the JSON itself is written only near the cap
  if (json.maxLength > MAX_ENTRY_BYTES && JSON.stringify(e).length > MAX_ENTRY_BYTES) {
    return { reason: `the entry is larger than ${MAX_ENTRY_BYTES / 1024 / 1024} MiB` };
  }
  if (!isValidSessionId(e.claudeSessionId)) return { reason: "claudeSessionId: not a valid session id" };
  const capturedMs = timeOf(e.capturedAt);
  if (capturedMs === null) return { reason: "capturedAt: not an ISO-8601 date" };
  if (capturedMs > opts.nowMs + MAX_CLOCK_SKEW_MS) {
    return { reason: `capturedAt: ${e.capturedAt} is more than ${MAX_CLOCK_SKEW_MS / 60_000} minutes ahead of the server's clock` };
  }
  if (e.committedAt !== undefined && timeOf(e.committedAt) === null) return { reason: "committedAt: not an ISO-8601 date" };
  if (e.recordedAt !== undefined && timeOf(e.recordedAt) === null) return { reason: "recordedAt: not an ISO-8601 date" };
  if (e.changedFiles.some((f) => f.length > MAX_PATH_CHARS)) return { reason: `changedFiles: a path is longer than ${MAX_PATH_CHARS} characters` };
  const files = [...new Set(e.changedFiles)];
  const listedFiles = files.length > MAX_ENTRY_FILES ? files.length : undefined;
  if (listedFiles !== undefined) e = { ...e, changedFiles: files.slice(0, MAX_ENTRY_FILES), changedFilesTotal: listedFiles };
  let records: unknown[] | undefined;
  if (opts.redact !== false) {
    const redacted = await redactEntry(e, pause);
    if ("reason" in redacted) return redacted;
    e = redacted.entry;
    records = redacted.records;
  }
  const lines = records ? conversationRecords(records) : conversationLines(e.conversationSnippet);
  const firstUser = lines.find((l) => l.role === "user")?.content.trim();
  const { conversationSnippet, groupRootId, keyOwner: _claimed, ...rest } = e as typeof e & { keyOwner?: unknown };
  const author = typeof e.author === "string" && e.author.trim() ? e.author : null;
  const keyOwner = opts.keyOwner ?? null;
  const times = entryTimes(e);
  return {
    ...(listedFiles !== undefined ? { listedFiles } : {}),
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

/** A row to store with its place in the batch. */
export interface CheckedRow {
  index: number;
  row: EntryRow;
}

/**
 * Splits a batch body (its entries from `from` up to `to`) into the rows to store and the entries refused, each with
 * its index, hash and reason; gives the event loop a turn between entries (`pause`).
 */
export async function checkBatch(
  captures: unknown[],
  opts: IngestOptions,
  pause: () => Promise<void> = timeSlicer(),
  from = 0,
  to = captures.length,
): Promise<{ rows: CheckedRow[]; rejected: Rejected[]; trimmed: Trimmed[] }> {
  const rows: CheckedRow[] = [];
  const rejected: Rejected[] = [];
  const trimmed: Trimmed[] = [];
  const seen = new Map<string, number>();
  for (let index = from; index < to; index++) {
    await pause();
    const raw = captures[index];
    const r = await checkEntry(raw, opts, pause);
    if ("reason" in r) {
      const hash = (raw as { commitHash?: unknown } | null)?.commitHash;
      rejected.push({ index, ...(typeof hash === "string" && hash.length <= 64 ? { commitHash: hash } : {}), reason: r.reason });
      continue;
    }
    if (r.listedFiles !== undefined) trimmed.push({ index, commitHash: r.row.commitHash, changedFiles: r.listedFiles, kept: r.row.files.length });
    // the same commit twice in one batch: the newer capture wins, as across batches
    const at = seen.get(r.row.commitHash);
    if (at === undefined) {
      seen.set(r.row.commitHash, rows.length);
      rows.push({ index, row: r.row });
    } else if (r.row.capturedMs >= rows[at]!.row.capturedMs) rows[at] = { index, row: r.row };
  }
  return { rows, rejected, trimmed };
}

/** The number of file rows a batch would write. */
export function batchFiles(rows: CheckedRow[]): number {
  let n = 0;
  for (const r of rows) n += r.row.files.length;
  return n;
}

/** What one storage transaction holds so far (entries, files, text), against the caps that keep it short. */
export class WriteRoom {
  private entries = 0;
  private files = 0;
  private chars = 0;
  constructor(private readonly maxChars: number) {}

  /** Takes the rows when they fit beside what it holds (an empty room takes any one row); false, taking none, if not. */
  take(rows: EntryRow[]): boolean {
    let files = 0;
    let chars = 0;
    for (const r of rows) {
      files += r.files.length;
      chars += r.summary.length + r.conversation.length + r.searchText.length;
    }
    const over = this.entries + rows.length > CHUNK_ENTRIES || this.files + files > CHUNK_FILES || this.chars + chars > this.maxChars;
    if (over && (this.entries > 0 || rows.length > 1)) return false;
    this.entries += rows.length;
    this.files += files;
    this.chars += chars;
    return true;
  }
}

/** Rows cut into runs small enough that one storage transaction on them stays short (at most `maxChars` of text). */
export function writeChunks<T extends { row: EntryRow }>(rows: T[], maxChars: number): T[][] {
  const chunks: T[][] = [];
  let cur: T[] = [];
  let room = new WriteRoom(maxChars);
  for (const r of rows) {
    if (!room.take([r.row])) {
      chunks.push(cur);
      cur = [];
      room = new WriteRoom(maxChars);
      room.take([r.row]);
    }
    cur.push(r);
  }
  if (cur.length) chunks.push(cur);
  return chunks;
}

/**
 * A session transcript as it will be stored: redacted again (as JSONL, like the client's), in pieces with a turn
 * of the event loop between them. Throws REDACTION_REFUSED when a hard secret survives.
 */
export async function redactTranscript(content: string, pause: () => Promise<void> = timeSlicer()): Promise<string> {
  const PIECE = 256 * 1024;
  async function* pieces() {
    for (let at = 0; at < content.length; at += PIECE) {
      await pause();
      yield content.slice(at, at + PIECE);
    }
  }
  let out = "";
  for await (const part of redactForWriteStream(pieces())) out += part;
  return out;
}
