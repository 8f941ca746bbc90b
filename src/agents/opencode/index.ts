import { checkPayload, shortName } from "../payload.ts";
import type { AgentEvent, HookInput } from "../types.ts";

// What aiflare's OpenCode plugin (install/opencode-plugin.ts) sends on stdin: OpenCode's own hook arguments as it
// passed them (`input`, `output`, seen with 1.18.33), under the name of the OpenCode hook or event (`hook`), plus
// what only the plugin knows: the session whose files the event belongs to (a subagent's child session is recorded
// in its top session, `subagent` then names the child), the turn's reply gathered from the message events (`reply`),
// and the directory OpenCode runs in.
const PAYLOAD = {
  hook: "string",
  session_id: "string",
  subagent: "nullable-string?",
  directory: "nullable-string?",
  input: "unknown?",
  output: "unknown?",
  reply: "nullable-string?",
} as const;

type Rec = Record<string, unknown>;

const str = (x: unknown): string | undefined => (typeof x === "string" ? x : undefined);
const rec = (x: unknown): Rec | undefined => (x && typeof x === "object" && !Array.isArray(x) ? (x as Rec) : undefined);

/**
 * The user's prompt of a `chat.message` hook: its first text part that OpenCode did not add itself (`synthetic`
 * parts carry file contents and reminders).
 */
export function opencodePrompt(output: unknown): string | undefined {
  const parts = rec(output)?.parts;
  if (!Array.isArray(parts)) return undefined;
  for (const p of parts) {
    const part = rec(p);
    if (part?.type === "text" && part.synthetic !== true && typeof part.text === "string") return part.text;
  }
  return undefined;
}

/** The model of a `chat.message` hook's message, as `provider/model`. */
function modelOf(output: unknown): string | undefined {
  const model = rec(rec(rec(output)?.message)?.model);
  const provider = str(model?.providerID);
  const id = str(model?.modelID);
  return id === undefined ? undefined : shortName(provider ? `${provider}/${id}` : id);
}

/**
 * OpenCode's tool names as the ones the core knows: `bash` runs commands as Claude Code's Bash does, its file
 * tools edit and read as Claude Code's do (arguments `filePath`). Other tools keep their own name.
 */
const TOOL_NAMES: Record<string, string> = { bash: "Bash", edit: "Edit", write: "Write", read: "Read" };

/**
 * Normalises an event from aiflare's OpenCode plugin: `chat.message` is the prompt, the turn's end carries the
 * reply, `tool.execute.after` a tool call (`args.command` for bash; `metadata.exit` its exit code). A subagent's
 * prompt and reply are its parent agent's instructions and notes, not the user's: skipped; its commands count.
 */
export function parseOpenCodeHookInput(event: AgentEvent, raw: unknown): HookInput {
  const p = checkPayload(raw, PAYLOAD);
  const input = rec(p.input);
  const output = rec(p.output);
  const subagent = str(p.subagent);
  const base: HookInput = { agent: "opencode", event, sessionId: p.session_id as string, cwd: str(p.directory) };
  if (subagent && (event === "user-prompt-submit" || event === "stop")) return { ...base, skip: "a subagent's own turn" };
  if (event === "user-prompt-submit") return { ...base, prompt: opencodePrompt(output), model: modelOf(output) };
  if (event === "stop") return { ...base, lastAssistantMessage: str(p.reply) ?? "" };
  if (event === "session-start") return { ...base, source: "startup" };
  if (event === "session-end") return { ...base, reason: "exit" };
  const tool = str(input?.tool);
  const args = rec(input?.args);
  const metadata = rec(output?.metadata);
  const exit = metadata?.exit;
  const text = str(output?.output) ?? str(metadata?.output);
  return {
    ...base,
    toolName: tool === undefined ? undefined : (TOOL_NAMES[tool] ?? tool),
    toolCommand: str(args?.command),
    toolInput: args,
    toolResponse: text === undefined ? undefined : { output: text },
    toolError: typeof exit === "number" && exit !== 0 ? `exit code ${exit}` : undefined,
  };
}

/**
 * What aiflare's OpenCode plugin reads from a hook's answer: only the context to hand the model (it appends it to
 * the tool's output, or to the system prompt at a session's start). Stop's `decision: "block"` has no OpenCode
 * counterpart a plugin can give (`opencode run` exits at the turn's end): nothing.
 */
export function opencodeHookOutput(out: Record<string, unknown>): Record<string, unknown> | undefined {
  const context = rec(out.hookSpecificOutput)?.additionalContext;
  return typeof context === "string" && context !== "" ? { additionalContext: context } : undefined;
}
