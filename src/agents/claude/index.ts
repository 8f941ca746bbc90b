import { isCursorPayload, parseCursorHookInput } from "../cursor/index.ts";
import { checkPayload, shortName } from "../payload.ts";
import type { AgentEvent, HookInput } from "../types.ts";

// Claude Code hook payloads (SPEC §6). Only the fields aiflare uses are declared; others are ignored.
const PAYLOAD = {
  session_id: "string",
  cwd: "string?",
  transcript_path: "string?",
  hook_event_name: "string?",
  prompt: "string?",
  stop_hook_active: "boolean?",
  last_assistant_message: "nullable-string?",
  tool_name: "string?",
  tool_input: "unknown?",
  tool_response: "unknown?",
  error: "unknown?",
  duration_ms: "unknown?",
  source: "string?",
  model: "unknown?",
  reason: "string?",
} as const;

/** Reads `tool_input.command` when the tool input is an object holding a string command. */
function commandOf(toolInput: unknown): string | undefined {
  if (toolInput && typeof toolInput === "object" && "command" in toolInput) {
    const cmd = (toolInput as { command: unknown }).command;
    if (typeof cmd === "string") return cmd;
  }
  return undefined;
}

/** The answers of an AskUserQuestion response (`tool_response.answers`: question → chosen label or typed text). */
function answersOf(toolName: string | undefined, response: unknown): { question: string; answer: string }[] | undefined {
  if (toolName !== "AskUserQuestion" || !response || typeof response !== "object") return undefined;
  const answers = (response as { answers?: unknown }).answers;
  if (!answers || typeof answers !== "object" || Array.isArray(answers)) return undefined;
  const out = Object.entries(answers as Record<string, unknown>)
    .filter((kv): kv is [string, string] => typeof kv[1] === "string")
    .map(([question, answer]) => ({ question, answer }));
  return out.length ? out : undefined;
}

/**
 * Normalises a Claude Code hook payload. Throws on a payload that is not an object with a string session_id.
 * Cursor runs Claude Code's hook files too, with its own payloads: those are Cursor's sessions and read as such.
 */
export function parseClaudeHookInput(event: AgentEvent, raw: unknown): HookInput {
  if (isCursorPayload(raw)) return parseCursorHookInput(event, raw);
  const p = checkPayload(raw, PAYLOAD);
  const s = (x: unknown) => (typeof x === "string" ? x : undefined);
  return {
    agent: "claude",
    event,
    sessionId: p.session_id as string,
    cwd: s(p.cwd),
    transcriptPath: s(p.transcript_path),
    prompt: s(p.prompt),
    stopHookActive: p.stop_hook_active as boolean | undefined,
    lastAssistantMessage: s(p.last_assistant_message),
    toolName: s(p.tool_name),
    toolCommand: commandOf(p.tool_input),
    toolResponse: p.tool_response,
    toolInput: p.tool_input,
    toolError: typeof p.error === "string" ? p.error : undefined,
    durationMs: typeof p.duration_ms === "number" && Number.isFinite(p.duration_ms) ? p.duration_ms : undefined,
    answers: answersOf(s(p.tool_name), p.tool_response),
    model: shortName(p.model),
    source: s(p.source),
    reason: s(p.reason),
  };
}
