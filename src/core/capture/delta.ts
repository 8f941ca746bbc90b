import { rmSync } from "node:fs";
import { atomicWrite } from "../fsutil.ts";
import { parseJsonl } from "../../util/jsonl.ts";
import type { SessionFiles } from "../session.ts";
import { readLogFrom, readLogState, readQuestionMark, updateLogState, type LogState } from "../session-log.ts";

/*
 * The delta: conversation lines recorded since the previous capture, read from the live log after the `cut` byte
 * offset. Taking a delta is two steps: {@link peekDelta} reads it, {@link commitCut} moves the offset once the entry
 * holding it is stored — a failed write leaves the lines for the next commit.
 */

export interface Delta {
  /** JSONL text of the new lines ("" when none) */
  text: string;
  /** the user started a new request: a `user` line that came before any AskUserQuestion of this delta */
  hasUser: boolean;
  /** an AskUserQuestion was answered since the previous capture */
  continuation: boolean;
  /** number of new lines */
  lines: number;
  /** byte offset in the log just past the delta */
  end: number;
}

export const NO_DELTA: Delta = { text: "", hasUser: false, continuation: false, lines: 0, end: 0 };

const isUser = (r: unknown) => typeof r === "object" && r !== null && (r as { role?: unknown }).role === "user";

/** True when some JSONL record of `text` is a `user` line (broken lines say nothing about who spoke). */
export function deltaHasUser(text: string): boolean {
  return parseJsonl(text).some(isUser);
}

/**
 * Reads the delta without taking it. SPEC §5: *delta has user* counts new requests only — a user line before the
 * pending question's position in the log; what the user gives after the question is its answer. `state`: the
 * session's state when the caller has just read it.
 */
export function peekDelta(files: Pick<SessionFiles, "prompts" | "offset" | "pendingQuestion">, state: LogState = readLogState(files)): Delta {
  const slice = readLogFrom(files.prompts, state.cut);
  const question = readQuestionMark(files);
  const hasUser = slice.records.some((r) => isUser(r.record) && (question === null || r.at < question));
  return { text: slice.text, hasUser, continuation: question !== null, lines: slice.records.length, end: slice.end };
}

/**
 * Takes the delta: moves the cut offset past it, keeps a copy in the delta file and clears the question marker the
 * delta was read with (a marker written since belongs to the next delta). `also`: more of the session's state to
 * change in the same write. `keep: false` leaves the copy to whoever stores the entry (the commit hook's job holds
 * the delta, and the capture worker keeps it: {@link keepDelta}). `state`: the session's state as read under the
 * session's lock that the caller still holds, not read again.
 */
export function commitCut(
  files: Pick<SessionFiles, "prompts" | "offset" | "delta" | "pendingQuestion">,
  delta: Delta,
  also?: (s: LogState) => Partial<LogState>,
  keep = true,
  state?: LogState,
): void {
  if (keep) keepDelta(files, delta.text);
  updateLogState(files, (s) => ({ ...also?.(s), cut: Math.max(delta.end, 0), lines: s.lines + delta.lines }), state);
  if (delta.continuation) rmSync(files.pendingQuestion, { force: true });
}

/** The delta file: the conversation cut at the session's last commit (SPEC §3). */
export function keepDelta(files: Pick<SessionFiles, "delta">, text: string): void {
  atomicWrite(files.delta, text, 0o600);
}
