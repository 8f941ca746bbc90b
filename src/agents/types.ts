/** The hook events aiflare handles for coding agents (SPEC §6). */
export const AGENT_EVENTS = [
  "session-start",
  "user-prompt-submit",
  "stop",
  "pre-tool-use",
  "post-tool-use",
  "post-tool-use-failure",
  "session-end",
  "agent-response",
] as const;
export type AgentEvent = (typeof AGENT_EVENTS)[number];

/** Which coding agent a session belongs to; selects the file prefix in `.context-capture/`. */
export const AGENT_NAMES = [
  "claude",
  "codex",
  "cursor",
  "qwen",
  "droid",
  "gemini",
  "copilot",
  "opencode",
] as const;
export type AgentName = (typeof AGENT_NAMES)[number];

/** One hook call, normalised: what the core sees whichever agent sent it. */
export interface HookInput {
  agent: AgentName;
  event: AgentEvent;
  /** not yet validated against the session-id rule */
  sessionId: string;
  cwd?: string;
  transcriptPath?: string;
  /** UserPromptSubmit */
  prompt?: string;
  /** Stop (Cursor: a `stop` with a `loop_count` above 0); agent-response: the reply as the agent sent it */
  stopHookActive?: boolean;
  lastAssistantMessage?: string;
  /** Stop: the reply came already, in the agent's own agent-response event */
  replyRecorded?: boolean;
  /**
   * Stop: the reply is not readable yet (Copilot CLI writes its events file behind the hook call): where to read it
   * at the session's next hook, and this Stop's stamp in that file
   */
  replyDue?: ReplyDue;
  /** PostToolUse */
  toolName?: string;
  toolCommand?: string;
  toolResponse?: unknown;
  /** PreToolUse / PostToolUse: the tool's input as sent (read by recall for the edited file) */
  toolInput?: unknown;
  /** PostToolUseFailure: the error text */
  toolError?: string;
  /** how long the tool call ran (Claude Code's `duration_ms`) */
  durationMs?: number;
  /** PostToolUse of AskUserQuestion: what was asked and what the user chose, in order */
  answers?: { question: string; answer: string }[];
  /** the agent's model, when the payload names it (Claude Code: SessionStart; Codex: every event) */
  model?: string;
  /** SessionStart */
  source?: string;
  /** SessionEnd */
  reason?: string;
  /** the session this new id continues (Factory Droid's compaction): it takes over that session's conversation */
  continues?: string;
  /** the event carries nothing for aiflare (Qwen Code's UserPromptSubmit on a tool-result continuation): why */
  skip?: string;
}

/** A reply to read later: the agent's events file and the stamp of the Stop it belongs to. */
export interface ReplyDue {
  path: string;
  stamp: number;
}

/** Turns an agent's raw hook payload into a HookInput; throws a ValiError/Error on a payload it cannot use. */
export type HookParser = (event: AgentEvent, raw: unknown) => HookInput;
