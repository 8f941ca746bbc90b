import { parseClaudeHookInput } from "./claude/index.ts";
import { parseCodexHookInput } from "./codex/index.ts";
import { parseGeminiHookInput } from "./gemini/index.ts";
import type { AgentName, HookParser } from "./types.ts";

/** The payload parser of each supported agent. */
export const HOOK_PARSERS: Record<AgentName, HookParser> = {
  claude: parseClaudeHookInput,
  codex: parseCodexHookInput,
  gemini: parseGeminiHookInput,
};
