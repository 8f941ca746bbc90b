/**
 * The session's conversation stored on the sessions branch without a commit: at SessionEnd, for stale sessions,
 * and after a commit's entries. Apart from the entry writer, so that SessionEnd loads neither it nor the timeline.
 */
import { rmSync } from "node:fs";
import { appendSessionSegment } from "../../store/sessions.ts";
import type { StoreRepo } from "../../store/branch.ts";
import type { HookContext } from "../hook/types.ts";
import { sessionFiles, type SessionFiles } from "../session.ts";
import { readLogFrom, readLogState, readQuestionMark, removeLiveFiles, updateLogState, type LogState } from "../session-log.ts";
import { atomicWrite } from "../fsutil.ts";
import type { RedactOptions } from "../../redact/index.ts";
import { redactOptionsFor } from "../config-files.ts";
import { withSessionSecrets } from "../session-secrets.ts";

/**
 * Stores the conversation lines of the live log that are not on the sessions branch yet, as the session's next
 * segment. The stored position moves only after the commit is written, in one write with `also` (more of the
 * session's state to change). Throws when storing fails, before that write.
 */
export async function storeNewLines(
  files: Pick<SessionFiles, "prompts" | "offset">,
  repo: StoreRepo,
  sessionId: string,
  redact: RedactOptions,
  also?: (s: LogState) => Partial<LogState>,
): Promise<number | null> {
  const state = readLogState(files);
  const slice = readLogFrom(files.prompts, state.stored);
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
 * SessionEnd: stores what the live log holds beyond the stored transcript, then shrinks the live files to what no
 * entry has taken yet — the next commit after a resume gets those lines. Files are removed only when nothing is
 * left to take. When storing fails, everything stays for the next hook or session.
 */
export async function endSession(ctx: HookContext): Promise<void> {
  await withSessionSecrets(ctx.files, await redactOptionsFor(ctx.repo.root, ctx.logger), (redact) =>
    storeNewLines(ctx.files, ctx.repo, ctx.input.sessionId, redact),
  );
  compactLog(ctx.files);
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

/** Keeps only the log's lines after the cut (all of them already stored), or removes the live files. */
export function compactLog(files: SessionFiles): void {
  const state = readLogState(files);
  const rest = readLogFrom(files.prompts, state.cut);
  if (!rest.text) {
    removeLiveFiles(files);
    return;
  }
  const question = readQuestionMark(files);
  atomicWrite(files.prompts, rest.text, 0o600);
  rmSync(files.delta, { force: true });
  updateLogState(files, () => ({ cut: 0, stored: Buffer.byteLength(rest.text, "utf8"), legacy: false }));
  if (question !== null) {
    const moved = rest.records.filter((r) => r.at < question).reduce((n, r) => n + Buffer.byteLength(r.line, "utf8") + 1, 0);
    atomicWrite(files.pendingQuestion, `${moved}\n`, 0o600);
  }
}
