import { checkPayload, shortName } from "../payload.ts";
import type { AgentEvent, HookInput } from "../types.ts";

// Codex hook payloads: the common fields (session_id, cwd, transcript_path — which may be null —,
// hook_event_name, model) plus per event: prompt; tool_name, tool_input, tool_response, tool_use_id;
// last_assistant_message, stop_hook_active, turn_id; source; reason (SessionEnd). Unknown fields are ignored.
const PAYLOAD = {
  session_id: "string",
  cwd: "nullable-string?",
  transcript_path: "nullable-string?",
  hook_event_name: "nullable-string?",
  prompt: "nullable-string?",
  stop_hook_active: "nullable-boolean?",
  last_assistant_message: "nullable-string?",
  tool_name: "nullable-string?",
  tool_input: "unknown?",
  tool_response: "unknown?",
  source: "nullable-string?",
  reason: "nullable-string?",
  model: "unknown?",
} as const;

/** Shells Codex wraps a command line in when it sends it as an argv array. */
const SHELL_WRAPPERS = new Set(["bash", "sh", "zsh", "/bin/bash", "/bin/sh", "/bin/zsh", "/usr/bin/bash", "/usr/bin/zsh"]);

/**
 * The command line of a shell tool call: `tool_input.command` as a string, or as an argv array
 * (`["bash", "-lc", "git commit -m x"]` yields the script; other arrays are joined with spaces).
 */
export function codexCommandOf(toolInput: unknown): string | undefined {
  if (!toolInput || typeof toolInput !== "object" || !("command" in toolInput)) return undefined;
  const cmd = (toolInput as { command: unknown }).command;
  if (typeof cmd === "string") return cmd;
  if (Array.isArray(cmd) && cmd.every((c) => typeof c === "string")) {
    const argv = cmd as string[];
    if (argv.length === 3 && SHELL_WRAPPERS.has(argv[0]!) && /^-\w*c$/.test(argv[1]!)) return argv[2];
    return argv.join(" ");
  }
  return undefined;
}

const str = (x: unknown): string | undefined => (typeof x === "string" ? x : undefined);

/** Normalises a Codex hook payload. Throws on a payload that is not an object with a string session_id. */
export function parseCodexHookInput(event: AgentEvent, raw: unknown): HookInput {
  const p = checkPayload(raw, PAYLOAD);
  return {
    agent: "codex",
    event,
    sessionId: p.session_id as string,
    cwd: str(p.cwd),
    transcriptPath: str(p.transcript_path),
    prompt: str(p.prompt),
    stopHookActive: typeof p.stop_hook_active === "boolean" ? p.stop_hook_active : undefined,
    lastAssistantMessage: str(p.last_assistant_message),
    toolName: str(p.tool_name),
    toolCommand: codexCommandOf(p.tool_input),
    toolResponse: p.tool_response,
    toolInput: p.tool_input,
    model: shortName(p.model),
    source: str(p.source),
    reason: str(p.reason),
  };
}
