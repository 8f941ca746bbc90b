import * as v from "valibot";
import type { AgentEvent, HookInput } from "../types.ts";

// Codex hook payloads: the common fields (session_id, cwd, transcript_path — which may be null —,
// hook_event_name, model) plus per event: prompt; tool_name, tool_input, tool_response, tool_use_id;
// last_assistant_message, stop_hook_active, turn_id; source. Unknown fields are ignored.
const str = v.optional(v.nullable(v.string()));

const Payload = v.object({
  session_id: v.string(),
  cwd: str,
  transcript_path: str,
  hook_event_name: str,
  prompt: str,
  stop_hook_active: v.optional(v.nullable(v.boolean())),
  last_assistant_message: str,
  tool_name: str,
  tool_input: v.optional(v.unknown()),
  tool_response: v.optional(v.unknown()),
  source: str,
});

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

const orUndefined = <T>(x: T | null | undefined): T | undefined => (x === null ? undefined : x);

/** Normalises a Codex hook payload. Throws on a payload that is not an object with a string session_id. */
export function parseCodexHookInput(event: AgentEvent, raw: unknown): HookInput {
  const p = v.parse(Payload, raw);
  return {
    agent: "codex",
    event,
    sessionId: p.session_id,
    cwd: orUndefined(p.cwd),
    transcriptPath: orUndefined(p.transcript_path),
    prompt: orUndefined(p.prompt),
    stopHookActive: orUndefined(p.stop_hook_active),
    lastAssistantMessage: orUndefined(p.last_assistant_message),
    toolName: orUndefined(p.tool_name),
    toolCommand: codexCommandOf(p.tool_input),
    toolResponse: p.tool_response,
    toolInput: p.tool_input,
    source: orUndefined(p.source),
  };
}
