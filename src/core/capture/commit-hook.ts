import type { HookContext, HookOutput } from "../hook/types.ts";
import { repoAt } from "../repo.ts";
import { reflogUnchanged } from "../session-log.ts";
import { findGitCommits, MAX_COMMAND_CHARS, MAX_INVOCATIONS, type CommitInvocation } from "./detect.ts";
import { reflogStampOf } from "./may-commit.ts";

// Every shell command the agent runs comes through here: detection is light, and the store, the redactor and
// the object reader are only loaded once a `git commit` is found and HEAD's reflog has grown since the last look.

/** The HEAD reflogs the command's commits would be written to, stamped (`reflogStampOf`). */
function reflogStamp(ctx: HookContext, invocations: CommitInvocation[]): string | null {
  return reflogStampOf(invocations.map((inv) => repoAt(inv.dir, ctx.repo).gitDir));
}

/**
 * PostToolUse of a shell tool: captures a `git commit` the agent made. `stampHere`: the reflog stamp the caller
 * already compared with the session's last look, for a command whose git runs only where it starts (its invocations'
 * stamp, then); undefined when that look is this function's to make.
 */
export async function onShellToolUse(ctx: HookContext, stampHere?: string | null): Promise<HookOutput> {
  const command = ctx.input.toolCommand;
  if (!command) return undefined;
  const invocations = findGitCommits(command, ctx.input.cwd ?? ctx.repo.root, ctx.env.HOME);
  if (invocations.length === 0) return undefined;
  if (command.length > MAX_COMMAND_CHARS || invocations.length >= MAX_INVOCATIONS) {
    ctx.logger.log("warn", "long command: only its start was read for commits", {
      session: ctx.input.sessionId,
      chars: command.length,
      invocations: invocations.length,
    });
  }
  // A git commit that failed, or had nothing to commit, left the reflogs as the last look found them: done at once,
  // and quietly (git said why to the agent; the log keeps what aiflare did or failed to do).
  let stamp = stampHere;
  if (stamp === undefined) {
    stamp = reflogStamp(ctx, invocations);
    if (reflogUnchanged(ctx.files, stamp)) return undefined;
  }
  const { captureCommits } = await import("./capture-commits.ts");
  // stamped as read before the look (a commit made since then changes it again), with the capture's last state write
  return captureCommits(ctx, invocations, stamp);
}

/** Stores, then removes, the live files of sessions that ended long ago without a SessionEnd. */
export async function storeStaleSessions(ctx: HookContext, sessionIds: string[]): Promise<void> {
  const { storeStaleSessions: store } = await import("./session-store.ts");
  await store(ctx, sessionIds);
}
