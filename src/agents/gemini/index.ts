import { checkPayload } from "../payload.ts";
import type { AgentEvent, HookInput } from "../types.ts";

// Gemini CLI hook payloads (0.61): the common fields session_id, transcript_path, cwd, hook_event_name, timestamp,
// plus per event: prompt (BeforeAgent, AfterAgent), prompt_response and stop_hook_active (AfterAgent), tool_name,
// tool_input, tool_response {llmContent, returnDisplay, error?} (AfterTool), source (SessionStart), reason
// (SessionEnd). Unknown fields are ignored.
const PAYLOAD = {
  session_id: "string",
  cwd: "nullable-string?",
  transcript_path: "nullable-string?",
  hook_event_name: "nullable-string?",
  prompt: "nullable-string?",
  prompt_response: "nullable-string?",
  stop_hook_active: "nullable-boolean?",
  tool_name: "nullable-string?",
  tool_input: "unknown?",
  tool_response: "unknown?",
  source: "nullable-string?",
  reason: "nullable-string?",
} as const;

/**
 * Gemini's tool names as the ones the core knows: its shell tool runs commands as Bash does, its file tools edit
 * and read as Claude Code's do. Other tools keep their own name.
 */
const TOOL_NAMES: Record<string, string> = {
  run_shell_command: "Bash",
  replace: "Edit",
  write_file: "Write",
  read_file: "Read",
};

const str = (x: unknown): string | undefined => (typeof x === "string" ? x : undefined);

const CONTEXT_OPEN = "<hook_context>";
const CONTEXT_CLOSE = "</hook_context>";

/**
 * The user's prompt of a BeforeAgent payload. In a non-interactive run Gemini CLI puts SessionStart's
 * additionalContext (aiflare's recall) before the first prompt, as `<hook_context>…</hook_context>` and a blank
 * line: the prompt is what follows it.
 */
export function geminiUserPrompt(prompt: string | undefined): string | undefined {
  if (prompt === undefined || !prompt.startsWith(CONTEXT_OPEN)) return prompt;
  const end = prompt.indexOf(CONTEXT_CLOSE);
  if (end < 0) return prompt;
  let i = end + CONTEXT_CLOSE.length;
  while (prompt[i] === "\n") i++;
  return prompt.slice(i);
}

/** The command of a `run_shell_command` call (`tool_input.command`). */
function commandOf(toolInput: unknown): string | undefined {
  if (!toolInput || typeof toolInput !== "object") return undefined;
  return str((toolInput as { command?: unknown }).command);
}

/** A failed tool's error text: `tool_response.error` (a string, or an object with a message). */
function errorOf(response: unknown): string | undefined {
  if (!response || typeof response !== "object") return undefined;
  const err = (response as { error?: unknown }).error;
  if (typeof err === "string") return err;
  if (err && typeof err === "object") return str((err as { message?: unknown }).message);
  return undefined;
}

/**
 * Normalises a Gemini CLI hook payload: BeforeAgent is the prompt, AfterAgent the reply (`prompt_response`),
 * AfterTool the tool call. Throws on a payload that is not an object with a string session_id.
 */
export function parseGeminiHookInput(event: AgentEvent, raw: unknown): HookInput {
  const p = checkPayload(raw, PAYLOAD);
  const tool = str(p.tool_name);
  return {
    agent: "gemini",
    event,
    sessionId: p.session_id as string,
    cwd: str(p.cwd),
    transcriptPath: str(p.transcript_path),
    prompt: geminiUserPrompt(str(p.prompt)),
    stopHookActive: typeof p.stop_hook_active === "boolean" ? p.stop_hook_active : undefined,
    lastAssistantMessage: event === "stop" ? str(p.prompt_response) : undefined,
    toolName: tool === undefined ? undefined : (TOOL_NAMES[tool] ?? tool),
    toolCommand: commandOf(p.tool_input),
    toolResponse: p.tool_response,
    toolInput: p.tool_input,
    toolError: errorOf(p.tool_response),
    source: str(p.source),
    reason: str(p.reason),
  };
}
