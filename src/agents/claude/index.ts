import * as v from "valibot";
import type { AgentEvent, HookInput } from "../types.ts";

// Claude Code hook payloads (SPEC §6). Only the fields aiflare uses are declared; others are ignored.
const str = v.optional(v.string());

const Payload = v.object({
  session_id: v.string(),
  cwd: str,
  transcript_path: str,
  hook_event_name: str,
  prompt: str,
  stop_hook_active: v.optional(v.boolean()),
  last_assistant_message: v.optional(v.nullable(v.string())),
  tool_name: str,
  tool_input: v.optional(v.unknown()),
  tool_response: v.optional(v.unknown()),
  error: v.optional(v.unknown()),
  duration_ms: v.optional(v.unknown()),
  source: str,
  reason: str,
});

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

/** Normalises a Claude Code hook payload. Throws on a payload that is not an object with a string session_id. */
export function parseClaudeHookInput(event: AgentEvent, raw: unknown): HookInput {
  const p = v.parse(Payload, raw);
  return {
    agent: "claude",
    event,
    sessionId: p.session_id,
    cwd: p.cwd,
    transcriptPath: p.transcript_path,
    prompt: p.prompt,
    stopHookActive: p.stop_hook_active,
    lastAssistantMessage: p.last_assistant_message ?? undefined,
    toolName: p.tool_name,
    toolCommand: commandOf(p.tool_input),
    toolResponse: p.tool_response,
    toolError: typeof p.error === "string" ? p.error : undefined,
    durationMs: typeof p.duration_ms === "number" && Number.isFinite(p.duration_ms) ? p.duration_ms : undefined,
    answers: answersOf(p.tool_name, p.tool_response),
    source: p.source,
    reason: p.reason,
  };
}
