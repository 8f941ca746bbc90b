import { parseClaudeHookInput } from "./claude/index.ts";
import { parseCodexHookInput } from "./codex/index.ts";
import { cursorHookOutput, parseCursorHookInput } from "./cursor/index.ts";
import { parseDroidHookInput, parseQwenHookInput } from "./claude-shaped/index.ts";
import { parseGeminiHookInput } from "./gemini/index.ts";
import { copilotHookOutput, parseCopilotHookInput } from "./copilot/index.ts";
import { opencodeHookOutput, parseOpenCodeHookInput } from "./opencode/index.ts";
import { copilotReply } from "./copilot/transcript.ts";
import type { AgentEvent, AgentName, HookParser, ReplyDue } from "./types.ts";

/** The payload parser of each supported agent. */
export const HOOK_PARSERS: Record<AgentName, HookParser> = {
  claude: parseClaudeHookInput,
  codex: parseCodexHookInput,
  cursor: parseCursorHookInput,
  qwen: parseQwenHookInput,
  droid: parseDroidHookInput,
  gemini: parseGeminiHookInput,
  copilot: parseCopilotHookInput,
  opencode: parseOpenCodeHookInput,
};

/**
 * Agents that read a hook's answer in a shape of their own: the core answers as Claude Code and Codex read it
 * (`hookSpecificOutput.additionalContext`, `decision: "block"`), these turn that into theirs (undefined: nothing).
 */
export const HOOK_OUTPUTS: Partial<Record<AgentName, (event: AgentEvent, out: Record<string, unknown>) => Record<string, unknown> | undefined>> = {
  cursor: cursorHookOutput,
  copilot: (_event, out) => copilotHookOutput(out),
  opencode: (_event, out) => opencodeHookOutput(out),
};

/**
 * The agent's own hook files (repository-relative, or under the home directory with `~/`): when one of them holds
 * aiflare's hooks, a payload of that agent arriving through another agent's hook file (Cursor running Claude Code's
 * hooks) is left to them, so the session is recorded once.
 */
export const OWN_HOOK_FILES: Partial<Record<AgentName, string[]>> = {
  cursor: [".cursor/hooks.json", "~/.cursor/hooks.json"],
};

/**
 * Agents whose Stop can find its reply not written yet (HookInput.replyDue): how the reply is read at the session's
 * next hook.
 */
export const LATE_REPLIES: Partial<Record<AgentName, (due: ReplyDue) => { reply?: string; ready: boolean }>> = {
  copilot: (due) => copilotReply(due.path, due.stamp),
};

/** Agents whose own hook file sends the turn's reply in an event of its own (agent-response) before Stop. */
export const REPLY_BEFORE_STOP: Partial<Record<AgentName, true>> = {
  cursor: true,
};

/**
 * Agents that also run another agent's hook files (GitHub Copilot CLI runs Claude Code's `.claude/settings*.json`
 * hooks, with `COPILOT_CLI=1` in their environment): such a call is left to the host agent's own hooks, so the
 * session is recorded once, as the agent that really ran.
 */
export const HOST_AGENT_ENV: { name: string; value: string; agent: AgentName }[] = [
  { name: "COPILOT_CLI", value: "1", agent: "copilot" },
];
