import { parseClaudeHookInput } from "./claude/index.ts";
import { parseCodexHookInput } from "./codex/index.ts";
import { copilotHookOutput, parseCopilotHookInput } from "./copilot/index.ts";
import type { AgentName, HookParser } from "./types.ts";

/** The payload parser of each supported agent. */
export const HOOK_PARSERS: Record<AgentName, HookParser> = {
  claude: parseClaudeHookInput,
  codex: parseCodexHookInput,
  copilot: parseCopilotHookInput,
};

/** Agents that read a hook's stdout in a shape of their own: turns the core's (Claude Code's) answer into it. */
export const HOOK_OUTPUTS: Partial<Record<AgentName, (out: Record<string, unknown>) => Record<string, unknown>>> = {
  copilot: copilotHookOutput,
};

/**
 * Agents that also run another agent's hook files (GitHub Copilot CLI runs Claude Code's `.claude/settings*.json`
 * hooks, with `COPILOT_CLI=1` in their environment): such a call is left to the host agent's own hooks, so the
 * session is recorded once, as the agent that really ran.
 */
export const HOST_AGENT_ENV: { name: string; value: string; agent: AgentName }[] = [
  { name: "COPILOT_CLI", value: "1", agent: "copilot" },
];
