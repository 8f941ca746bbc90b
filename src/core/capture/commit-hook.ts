import type { HookContext, HookOutput } from "../hook/types.ts";
import { findGitCommits, MAX_COMMAND_CHARS, MAX_INVOCATIONS } from "./detect.ts";

// Every shell command the agent runs comes through here: detection is light, and the store, the redactor and
// the object reader are only loaded once a `git commit` is found.

/** PostToolUse of a shell tool: captures a `git commit` the agent made. */
export async function onShellToolUse(ctx: HookContext): Promise<HookOutput> {
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
  const { captureCommits } = await import("./capture-commits.ts");
  return captureCommits(ctx, invocations);
}

/** SessionEnd: stores the rest of the session's conversation, then clears its live files. */
export async function endSession(ctx: HookContext): Promise<void> {
  const { endSession: end } = await import("./capture-commits.ts");
  await end(ctx);
}

/** Stores, then removes, the live files of sessions that ended long ago without a SessionEnd. */
export async function storeStaleSessions(ctx: HookContext, sessionIds: string[]): Promise<void> {
  const { storeStaleSessions: store } = await import("./capture-commits.ts");
  await store(ctx, sessionIds);
}
