import { closeSync, constants, fstatSync, readSync, rmSync } from "node:fs";
import { atomicWrite, openOwnFile, ownFileSize, readOwnFile, writeAll } from "./fsutil.ts";
import type { SessionFiles } from "./session.ts";
import { isFullHash, isValidSessionId } from "../util/ids.ts";
import { lockFileSync, type HeldLock, type LockFileOptions } from "../util/lockfile.ts";
import type { ReplyDue } from "../agents/types.ts";

/*
 * The live conversation log of a session (`.<agent>-prompts-S`) and its positions, kept in the offset file
 * (`.<agent>-offset-S`) as JSON:
 *   cut     bytes of the log already given to an entry as a delta
 *   stored  bytes of the log already stored on the sessions branch as a segment
 *   lines   conversation lines captured so far (what the offset file held in the first format)
 *   pending commits of this session whose entry still waits for the agent's summary; reminded: those the agent was
 *           already asked to summarise; told: those the user was told about because the agent did not act
 *   model   the agent's model, as its SessionStart named it; continuedFrom: the session a `/clear` handoff continued
 * Readers start at these byte offsets, so a commit costs what the conversation grew by since the last one.
 */

export interface LogState {
  cut: number;
  stored: number;
  lines: number;
  pending: string[];
  reminded: string[];
  told: string[];
  model?: string;
  continuedFrom?: string;
  /** the HEAD reflogs (sizes and times, hashed) as the commit hook last looked for new commits in them */
  reflogSeen?: string;
  /** Stops' replies not yet readable in the agent's events file, oldest first: read at the session's next hooks */
  replyDue?: ReplyDue[];
  /** the offset file had the first format (a line count): the stored transcript, if any, is a whole-log copy */
  legacy: boolean;
}

const EMPTY: LogState = { cut: 0, stored: 0, lines: 0, pending: [], reminded: [], told: [], legacy: false };

const text = (x: unknown): string | undefined => (typeof x === "string" && x.length > 0 && x.length <= 200 ? x : undefined);
const nat = (x: unknown): number => (typeof x === "number" && Number.isSafeInteger(x) && x > 0 ? x : 0);
// loops rather than filter/map on the hooks' path: the engine compiles those on first use (src/README.md, hot paths)
function hashes(x: unknown): string[] {
  const out: string[] = [];
  if (Array.isArray(x)) for (const h of x) if (typeof h === "string" && isFullHash(h)) out.push(h);
  return out;
}

function readText(path: string): string | null {
  try {
    return readOwnFile(path);
  } catch (err) {
    // a symlink in place of a session file is refused loudly; anything else reads as absent
    if ((err as { code?: string }).code === "UNSAFE_PATH") throw err;
    return null;
  }
}

/** The byte offset where the `n`-th line of `text` starts (past the end when it has fewer). */
function byteOffsetOfLine(text: string, n: number): number {
  let pos = 0;
  for (let i = 0; i < n; i++) {
    const nl = text.indexOf("\n", pos);
    if (nl < 0) return Buffer.byteLength(text, "utf8") + 1;
    pos = nl + 1;
  }
  return Buffer.byteLength(text.slice(0, pos), "utf8");
}

/** Reads a session's log positions (all zero when the offset file is absent or unreadable). */
export function readLogState(files: Pick<SessionFiles, "offset" | "prompts">): LogState {
  const raw = readText(files.offset)?.trim() ?? "";
  if (!raw) return { ...EMPTY };
  // the current format is JSON: the first one's digits are looked for only otherwise
  if (raw.charCodeAt(0) !== 123 && /^\d+$/.test(raw)) {
    // first format: a count of lines already cut
    const lines = Number(raw);
    const cut = byteOffsetOfLine(readText(files.prompts) ?? "", lines);
    return { ...EMPTY, cut, lines, legacy: true };
  }
  try {
    const j = JSON.parse(raw) as Record<string, unknown>;
    const state: LogState = { cut: nat(j.cut), stored: nat(j.stored), lines: nat(j.lines), pending: hashes(j.pending), reminded: hashes(j.reminded), told: hashes(j.told), legacy: j.legacy === true };
    const model = text(j.model);
    const continuedFrom = text(j.continuedFrom);
    if (model) state.model = model;
    if (continuedFrom && isValidSessionId(continuedFrom)) state.continuedFrom = continuedFrom;
    const reflogSeen = text(j.reflogSeen);
    if (reflogSeen) state.reflogSeen = reflogSeen;
    const due: ReplyDue[] = [];
    if (Array.isArray(j.replyDue)) {
      for (const d of j.replyDue as Partial<ReplyDue>[]) {
        if (d && typeof d.path === "string" && d.path.length <= 4096 && d.path.endsWith(".jsonl") && Number.isSafeInteger(d.stamp)) due.push({ path: d.path, stamp: d.stamp! });
      }
    }
    if (due.length) state.replyDue = due;
    return state;
  } catch {
    return { ...EMPTY };
  }
}

/** The session lock: a holder keeps it for milliseconds, so one older than 5 s, or whose process is gone, was left behind. */
const SESSION_LOCK: LockFileOptions = {
  pid: true,
  staleMs: 5_000,
  // a hook never waits longer: past that, the lock is taken over or the hook's work fails (and is logged)
  waitMs: 10_000,
  maxPollMs: 20,
  mode: 0o600,
  busy: (holder) => new Error(`a session lock stays held${holder ? ` by pid ${holder}` : ""}`),
};
/** The session locks this process holds (taking one again inside is a no-op). */
const held = new Set<string>();

/**
 * Runs `fn` holding the session's lock (`<live log>.lock`, util/lockfile.ts): every write that reads the live files
 * and writes them back (the state, the log's compaction) and every append to the log takes it, so a hook of a
 * running or resumed session and the detached capture worker never lose each other's lines or fields. Waits while
 * another process holds it; a lock whose holder is gone, or older than 5 s, is taken over.
 */
export function withSessionLock<T>(files: Pick<SessionFiles, "prompts">, fn: () => T): T {
  const path = `${files.prompts}.lock`;
  if (held.has(path)) return fn();
  let lock: HeldLock;
  try {
    lock = lockFileSync(path, SESSION_LOCK);
  } catch (err) {
    // no directory yet: nothing to lock against, the caller creates it
    if ((err as { code?: string }).code === "ENOENT") return fn();
    throw err;
  }
  held.add(path);
  try {
    return fn();
  } finally {
    held.delete(path);
    lock.release();
  }
}

/**
 * True when `stamp` (a HEAD reflog stamp: `reflogStampOf`) is the one the session's last look kept: no commit was made
 * since. False for no stamp (a repository that keeps no reflog, or a look not made).
 */
export function reflogUnchanged(files: Pick<SessionFiles, "offset" | "prompts">, stamp: string | null | undefined): boolean {
  return stamp != null && readLogState(files).reflogSeen === stamp;
}

/**
 * Changes a session's log positions: `change` gets the current state and returns the fields to set. `known`: the
 * state as the caller read it under the session's lock, which it still holds.
 */
export function updateLogState(
  files: Pick<SessionFiles, "offset" | "prompts">,
  change: (s: LogState) => Partial<LogState>,
  known?: LogState,
): LogState {
  return withSessionLock(files, () => {
    const current = known ?? readLogState(files);
    const next = { ...current, ...change(current) };
    const { legacy, ...rest } = next;
    atomicWrite(files.offset, `${JSON.stringify(legacy ? { ...rest, legacy } : rest)}\n`, 0o600);
    return next;
  });
}

/**
 * Keeps what a hook learnt about the session (its model, the session it continued) beside the log positions, for
 * the entries written later. Writes only when something changed.
 */
export function rememberSession(files: Pick<SessionFiles, "offset" | "prompts">, about: Pick<LogState, "model" | "continuedFrom">): void {
  const current = readLogState(files);
  if ((!about.model || about.model === current.model) && (!about.continuedFrom || about.continuedFrom === current.continuedFrom)) return;
  updateLogState(files, () => ({
    ...(about.model ? { model: about.model } : {}),
    ...(about.continuedFrom ? { continuedFrom: about.continuedFrom } : {}),
  }));
}

/** Size of a file in bytes, 0 when absent. */
function sizeOf(fd: number): number {
  return fstatSync(fd).size;
}

/**
 * Appends whole JSONL lines to a log with one write(2) on an O_APPEND descriptor, so parallel writers never
 * interleave. A torn last line (an earlier append cut short by a full disk) is closed with a newline first, so
 * the new records never glue onto it; readers skip the torn line. Returns the log's size before the append.
 */
export function appendLogLines(path: string, lines: readonly object[]): number {
  return withSessionLock({ prompts: path }, () => appendUnlocked(path, lines));
}

function appendUnlocked(path: string, lines: readonly object[]): number {
  // never through a symlink: a repository cannot redirect the conversation elsewhere
  const fd = openOwnFile(path, constants.O_RDWR | constants.O_APPEND | constants.O_CREAT);
  try {
    const before = sizeOf(fd);
    let prefix = "";
    if (before > 0) {
      const last = new Uint8Array(1);
      readSync(fd, last, 0, 1, before - 1);
      if (last[0] !== 0x0a) prefix = "\n";
    }
    let text = prefix;
    for (const l of lines) text += `${JSON.stringify(l)}\n`;
    writeAll(fd, text);
    return before + prefix.length;
  } finally {
    closeSync(fd);
  }
}

/** A stretch of the log: its complete, valid JSON lines. */
export interface LogSlice {
  /** the valid lines, each with its byte offset in the log */
  records: { at: number; line: string; record: unknown }[];
  /** JSONL text of the valid lines ("" when none) */
  text: string;
  /** byte offset just past the last complete line read */
  end: number;
}

/**
 * Reads the complete lines of a log from byte offset `from` (only the part after it), up to byte offset `to` when
 * given (the log's size at an earlier moment). A line that is not JSON (torn by a failed append) is skipped. A log
 * shorter than `from` was replaced: it is read from its start.
 */
export function readLogFrom(path: string, from: number, to?: number): LogSlice {
  let fd: number;
  try {
    fd = openOwnFile(path, constants.O_RDONLY);
  } catch (err) {
    if ((err as { code?: string }).code === "UNSAFE_PATH") throw err;
    return { records: [], text: "", end: 0 };
  }
  try {
    const size = to === undefined ? sizeOf(fd) : Math.min(to, sizeOf(fd));
    // a bound at or before `from`: nothing of that moment is left to read
    if (to !== undefined && from >= to) return { records: [], text: "", end: from };
    const start = from > size ? 0 : from;
    const buf = Buffer.alloc(size - start);
    let got = 0;
    while (got < buf.length) {
      const n = readSync(fd, buf, got, buf.length - got, start + got);
      if (n <= 0) break;
      got += n;
    }
    // only complete lines: a writer may be appending right now
    const lastNl = buf.subarray(0, got).lastIndexOf(0x0a);
    const records: LogSlice["records"] = [];
    const kept: string[] = [];
    let pos = 0;
    while (pos <= lastNl) {
      const nl = buf.indexOf(0x0a, pos);
      const line = buf.subarray(pos, nl).toString("utf8");
      if (line.trim()) {
        try {
          const record = JSON.parse(line) as unknown;
          if (record && typeof record === "object") {
            records.push({ at: start + pos, line, record });
            kept.push(line);
          }
        } catch {
          // a torn line: never merged with its neighbour, never stored
        }
      }
      pos = nl + 1;
    }
    return { records, text: kept.length ? `${kept.join("\n")}\n` : "", end: start + lastNl + 1 };
  } finally {
    closeSync(fd);
  }
}

/** The log offset written into the pending-question marker (the log's size when the question was asked). */
export function readQuestionMark(files: Pick<SessionFiles, "pendingQuestion">): number | null {
  const raw = readText(files.pendingQuestion);
  if (raw === null) return null;
  const n = Number.parseInt(raw.trim(), 10);
  // an empty marker (first format): the question came before anything still uncut
  return Number.isSafeInteger(n) && n >= 0 ? n : 0;
}

/** True when the live log holds complete lines beyond what is stored on the sessions branch. */
export function hasUnstoredLines(files: Pick<SessionFiles, "prompts" | "offset">): boolean {
  const size = ownFileSize(files.prompts);
  if (size === undefined) return false;
  const { stored, legacy } = readLogState(files);
  return legacy || size > stored;
}

/** Removes one session's live files. */
export function removeLiveFiles(files: Pick<SessionFiles, "prompts" | "offset" | "delta" | "pendingQuestion" | "secrets">): void {
  for (const path of [files.prompts, files.offset, files.delta, files.pendingQuestion, files.secrets]) rmSync(path, { force: true });
}
