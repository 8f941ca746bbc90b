import { checkPayload, shortName } from "../payload.ts";
import type { AgentEvent, HookInput } from "../types.ts";

// Cursor hook payloads (`.cursor/hooks.json`, and Claude Code's hook files when Cursor runs those): the common
// fields conversation_id (= session_id), generation_id, model, cursor_version, workspace_roots[], user_email,
// transcript_path (null in the `agent` CLI), hook_event_name (camelCase); per event: prompt (beforeSubmitPrompt),
// text (afterAgentResponse), status and loop_count (stop), tool_name, tool_input, tool_output — a JSON string
// `{"output","exitCode"}` — (postToolUse), error_message (postToolUseFailure), reason (sessionEnd).
const PAYLOAD = {
  conversation_id: "nullable-string?",
  session_id: "nullable-string?",
  cursor_version: "string",
  workspace_roots: "unknown?",
  cwd: "nullable-string?",
  transcript_path: "nullable-string?",
  prompt: "nullable-string?",
  text: "nullable-string?",
  loop_count: "unknown?",
  tool_name: "nullable-string?",
  tool_input: "unknown?",
  tool_output: "unknown?",
  error_message: "unknown?",
  error: "unknown?",
  model: "unknown?",
  reason: "nullable-string?",
  source: "nullable-string?",
} as const;

const str = (x: unknown): string | undefined => (typeof x === "string" ? x : undefined);

/** True for a payload Cursor sent, whichever hook file ran the hook: Cursor names its version in every payload. */
export function isCursorPayload(raw: unknown): boolean {
  return !!raw && typeof raw === "object" && typeof (raw as { cursor_version?: unknown }).cursor_version === "string";
}

/** `tool_output` is a JSON string `{"output","exitCode"}`; an object or plain text is taken as it is. */
function toolResponseOf(output: unknown): unknown {
  if (typeof output !== "string") return output;
  try {
    const parsed: unknown = JSON.parse(output);
    return parsed && typeof parsed === "object" ? parsed : output;
  } catch {
    return output;
  }
}

function commandOf(toolInput: unknown): string | undefined {
  if (toolInput && typeof toolInput === "object" && "command" in toolInput) return str((toolInput as { command: unknown }).command);
  return undefined;
}

function firstRoot(roots: unknown): string | undefined {
  return Array.isArray(roots) ? str(roots[0]) : undefined;
}

/** Normalises a Cursor hook payload. Throws on a payload without cursor_version or without a conversation id. */
export function parseCursorHookInput(event: AgentEvent, raw: unknown): HookInput {
  const p = checkPayload(raw, PAYLOAD);
  const sessionId = str(p.conversation_id) ?? str(p.session_id);
  if (sessionId === undefined) throw new Error("cursor payload has no conversation_id");
  const error = str(p.error_message) ?? str(p.error);
  return {
    agent: "cursor",
    event,
    sessionId,
    cwd: str(p.cwd) ?? firstRoot(p.workspace_roots),
    transcriptPath: str(p.transcript_path),
    prompt: str(p.prompt),
    // afterAgentResponse carries the reply; `stop` only says the loop ended (and how often it was continued)
    lastAssistantMessage: str(p.text),
    stopHookActive: typeof p.loop_count === "number" ? p.loop_count > 0 : undefined,
    toolName: str(p.tool_name),
    toolCommand: commandOf(p.tool_input),
    toolInput: p.tool_input,
    toolResponse: toolResponseOf(p.tool_output),
    toolError: error,
    model: shortName(p.model),
    source: str(p.source),
    reason: str(p.reason),
  };
}

/** Cursor drops an `additional_context` longer than this. */
const CONTEXT_MAX = 10_000;

/**
 * What Cursor reads from a hook's stdout: `additional_context` (sessionStart, postToolUse) and `followup_message`
 * (stop, sent as the next user message). Context before an edit has no place in Cursor's preToolUse, and a Stop
 * message to the user has none either: those are left out.
 */
export function cursorHookOutput(event: AgentEvent, out: Record<string, unknown>): Record<string, unknown> | undefined {
  const specific = out.hookSpecificOutput as { additionalContext?: unknown } | undefined;
  if (typeof specific?.additionalContext === "string" && (event === "session-start" || event.startsWith("post-tool-use"))) {
    return { additional_context: specific.additionalContext.slice(0, CONTEXT_MAX) };
  }
  if (out.decision === "block" && typeof out.reason === "string") return { followup_message: out.reason };
  return undefined;
}
