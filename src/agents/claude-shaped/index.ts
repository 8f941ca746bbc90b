import { parseClaudeHookInput } from "../claude/index.ts";
import type { AgentEvent, AgentName, HookInput, HookParser } from "../types.ts";

/**
 * Agents that speak Claude Code's hook protocol (the same events, payload fields and `hookSpecificOutput` answers)
 * with their own tool names and a few quirks. One parser serves them all; what differs is data in a profile, so the
 * core sees Claude Code's vocabulary whichever of them spoke.
 */
export interface ClaudeShapedProfile {
  agent: AgentName;
  /** the agent's tool names as Claude Code names the same tool (its shell tool → `Bash`, its file writer → `Write`) */
  tools: Readonly<Record<string, string>>;
  /**
   * The UserPromptSubmit field that holds what the user typed. When set, a UserPromptSubmit without it is not a
   * prompt (Qwen Code also fires the event on each tool-result continuation, with `prompt: ""`).
   */
  promptField?: string;
  /** the SessionStart field naming the session a new id continues (Factory Droid starts a new id on compaction) */
  continuesField?: string;
  /** the `tool_response` field holding a shell tool's text output, read as Claude Code's `stdout` */
  outputField?: string;
}

/**
 * Qwen Code 0.24 (`.qwen/settings.json`): tools `run_shell_command`, `edit`, `write_file`; the prompt in
 * `submitted_prompt`; `Stop.last_assistant_message` holds the reply.
 */
export const QWEN_PROFILE: ClaudeShapedProfile = {
  agent: "qwen",
  tools: { run_shell_command: "Bash", edit: "Edit", replace: "Edit", write_file: "Write", ask_user_question: "AskUserQuestion" },
  promptField: "submitted_prompt",
  outputField: "llmContent",
};

/**
 * Factory Droid (`~/.factory/settings.json`): tools `Execute`, `Edit`, `MultiEdit`, `Create`, `ApplyPatch`; a
 * compaction starts a new session id whose SessionStart names the old one in `previous_session_id`.
 */
export const DROID_PROFILE: ClaudeShapedProfile = {
  agent: "droid",
  tools: { Execute: "Bash", Edit: "Edit", MultiEdit: "MultiEdit", Create: "Write", ApplyPatch: "apply_patch", AskUser: "AskUserQuestion" },
  continuesField: "previous_session_id",
};

const field = (raw: unknown, name: string): unknown => (raw as Record<string, unknown>)[name];

/** The payload parser of one Claude-shaped agent. */
export function claudeShapedParser(profile: ClaudeShapedProfile): HookParser {
  return (event: AgentEvent, raw: unknown): HookInput => {
    const input = parseClaudeHookInput(event, raw);
    input.agent = profile.agent;
    if (input.toolName !== undefined) {
      input.toolName = Object.hasOwn(profile.tools, input.toolName) ? profile.tools[input.toolName] : input.toolName;
    }
    if (profile.outputField && input.toolResponse && typeof input.toolResponse === "object") {
      const text = field(input.toolResponse, profile.outputField);
      if (typeof text === "string") input.toolResponse = { stdout: text };
    }
    if (event === "user-prompt-submit" && profile.promptField) {
      const typed = field(raw, profile.promptField);
      if (typeof typed === "string") input.prompt = typed;
      else input.skip = "a continuation, not a prompt";
    }
    if (profile.continuesField) {
      const previous = field(raw, profile.continuesField);
      if (typeof previous === "string" && previous !== input.sessionId) input.continues = previous;
    }
    return input;
  };
}

/** Normalises a Qwen Code hook payload. */
export const parseQwenHookInput: HookParser = claudeShapedParser(QWEN_PROFILE);

/** Normalises a Factory Droid hook payload. */
export const parseDroidHookInput: HookParser = claudeShapedParser(DROID_PROFILE);
