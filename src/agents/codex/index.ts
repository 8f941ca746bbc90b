import type { AgentEvent, HookInput } from "../types.ts";
import { parseClaudeHookInput } from "../claude/index.ts";

/**
 * Normalises a Codex hook payload. Codex sends the same common fields as Claude Code
 * (session_id, cwd, transcript_path, prompt, last_assistant_message, tool_name, tool_input).
 */
export function parseCodexHookInput(event: AgentEvent, raw: unknown): HookInput {
  return { ...parseClaudeHookInput(event, raw), agent: "codex" };
}
