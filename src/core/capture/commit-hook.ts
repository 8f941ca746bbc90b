import type { HookContext, HookOutput } from "../hook/types.ts";

/** PostToolUse of a shell tool: captures a `git commit` the agent made. */
export async function onShellToolUse(_ctx: HookContext): Promise<HookOutput> {
  return undefined;
}

/** Stores the session's redacted conversation on `aiflare/sessions/v1`. */
export async function storeSessionTranscript(_ctx: HookContext): Promise<void> {}
