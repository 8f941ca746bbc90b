import type { HookInput } from "../../agents/types.ts";
import type { Logger } from "../log.ts";
import type { RepoPaths } from "../repo.ts";
import type { SessionFiles } from "../session.ts";

/** Everything a hook handler needs, passed explicitly. */
export interface HookContext {
  input: HookInput & { sessionId: string };
  repo: RepoPaths;
  files: SessionFiles;
  logger: Logger;
  env: Record<string, string | undefined>;
}

/** What a handler may print: a JSON object for stdout (only where the agent reads JSON). */
export type HookOutput = Record<string, unknown> | undefined;

export type HookHandler = (ctx: HookContext) => HookOutput | Promise<HookOutput>;
