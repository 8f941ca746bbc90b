/**
 * The session's conversation stored on the sessions branch without a commit: after SessionEnd, for stale sessions,
 * and after a commit's entries. Apart from the entry writer, so that storing a transcript loads neither it nor the
 * timeline.
 */
import { rmSync } from "node:fs";
import { appendSessionSegment } from "../../store/sessions.ts";
import type { StoreRepo } from "../../store/branch.ts";
import type { HookContext } from "../hook/types.ts";
import { sessionFiles, type SessionFiles } from "../session.ts";
import { readLogFrom, readLogState, readQuestionMark, removeLiveFiles, updateLogState, withSessionLock, type LogState } from "../session-log.ts";
import type { Logger } from "../log.ts";
import { atomicWrite } from "../fsutil.ts";
import type { RedactOptions } from "../../redact/index.ts";
import { redactOptionsFor } from "../config-files.ts";
import { withSessionSecrets } from "../session-secrets.ts";

/**
 * Stores the conversation lines of the live log that are not on the sessions branch yet, as the session's next
 * segment: up to byte offset `upTo` when given (the log's size when the work was queued), else to its end. The
 * stored position moves only after the commit is written, in one write with `also` (more of the session's state to
 * change). Throws when storing fails, before that write.
 */
export async function storeNewLines(
  files: Pick<SessionFiles, "prompts" | "offset">,
  repo: StoreRepo,
  sessionId: string,
  redact: RedactOptions,
  also?: (s: LogState) => Partial<LogState>,
  upTo?: number,
): Promise<number | null> {
  const state = readLogState(files);
  const slice = readLogFrom(files.prompts, state.stored, upTo);
  if (!slice.text) {
    const moved = slice.end !== state.stored && slice.end > 0;
    if (moved || also) updateLogState(files, (s) => ({ ...also?.(s), ...(moved ? { stored: slice.end } : {}) }));
    return null;
  }
  const seq = await appendSessionSegment(repo, sessionId, slice.text, { redact, replaceLegacy: state.legacy });
  updateLogState(files, (s) => ({ ...also?.(s), stored: slice.end, legacy: false }));
  return seq;
}

/**
 * The rest of a session after its SessionEnd (run by the capture worker): stores what the live log held beyond the
 * stored transcript when the session ended (`upTo`), then, with `compact`, shrinks the live files to what no entry
 * has taken yet — the next commit after a resume gets those lines. Files are removed only when nothing is left to
 * take. When storing fails, everything stays for the next try.
 */
export async function storeEndedSession(
  files: SessionFiles,
  repo: StoreRepo & { root: string },
  sessionId: string,
  upTo: number,
  laterWork: () => boolean,
  logger: Logger,
): Promise<void> {
  await withSessionSecrets(files, await redactOptionsFor(repo.root, logger), (redact) => storeNewLines(files, repo, sessionId, redact, undefined, upTo));
  compactLog(files, laterWork);
}

/** Stores what stale sessions' live logs hold beyond their stored transcript, then removes their live files. */
export async function storeStaleSessions(ctx: HookContext, sessionIds: string[]): Promise<void> {
  const redact = await redactOptionsFor(ctx.repo.root, ctx.logger);
  for (const id of sessionIds) {
    const files = sessionFiles(ctx.repo.root, ctx.input.agent, id);
    try {
      await withSessionSecrets(files, redact, (known) => storeNewLines(files, ctx.repo, id, known));
      removeLiveFiles(files);
    } catch (err) {
      ctx.logger.log("warn", `stale session kept: its conversation could not be stored (${(err as Error).message})`, { session: id });
    }
  }
}

/**
 * Keeps only the log's lines after the cut, or removes the live files when there are none. Under the session's
 * lock: a resumed session's hooks may be appending meanwhile, and what they appended (not stored yet) stays so.
 * Not at all when `laterWork` says, under that lock, that work queued since still needs the log's positions as they
 * are (a resumed session's commit: the commit hook takes its delta and queues it under the same lock).
 */
export function compactLog(files: SessionFiles, laterWork: () => boolean = () => false): void {
  withSessionLock(files, () => {
    if (laterWork()) return;
    const state = readLogState(files);
    // lines an entry took that the sessions branch does not hold yet stay for the next store
    if (state.stored < state.cut) return;
    const rest = readLogFrom(files.prompts, state.cut);
    if (!rest.text) {
      removeLiveFiles(files);
      return;
    }
    const question = readQuestionMark(files);
    atomicWrite(files.prompts, rest.text, 0o600);
    rmSync(files.delta, { force: true });
    // the kept lines' bytes before a position of the old log: that position in the new one
    const before = (at: number) => rest.records.filter((r) => r.at < at).reduce((n, r) => n + Buffer.byteLength(r.line, "utf8") + 1, 0);
    updateLogState(files, () => ({ cut: 0, stored: before(state.stored), legacy: false }));
    if (question !== null) atomicWrite(files.pendingQuestion, `${before(question)}\n`, 0o600);
  });
}
