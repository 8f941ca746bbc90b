import { checkPayload } from "../payload.ts";
import type { AgentEvent, HookInput } from "../types.ts";
import { copilotReply } from "./transcript.ts";

// GitHub Copilot CLI hook payloads, camelCase (hooks configured under camelCase event names): common sessionId,
// timestamp (ms), cwd; sessionStart source, initialPrompt; userPromptSubmitted prompt; pre/postToolUse toolName,
// toolArgs (an object, or the same as a JSON string), toolResult {resultType, textResultForLlm}; agentStop
// transcriptPath, stopReason, stop_hook_active; sessionEnd reason. Unknown fields are ignored.
const PAYLOAD = {
  sessionId: "string",
  timestamp: "unknown?",
  cwd: "string?",
  prompt: "string?",
  toolName: "string?",
  toolArgs: "unknown?",
  toolResult: "unknown?",
  error: "unknown?",
  transcriptPath: "string?",
  stop_hook_active: "boolean?",
  source: "string?",
  reason: "string?",
} as const;

const str = (x: unknown): string | undefined => (typeof x === "string" ? x : undefined);

/** The tool's arguments as an object: Copilot sends them as an object or as their JSON text. */
function argsOf(toolArgs: unknown): unknown {
  if (typeof toolArgs !== "string") return toolArgs;
  try {
    return JSON.parse(toolArgs);
  } catch {
    return undefined;
  }
}

/** The tool's result as the core reads a shell tool's response: the text the model was given (git's own lines). */
function resultOf(toolResult: unknown): unknown {
  if (!toolResult || typeof toolResult !== "object") return toolResult;
  const text = str((toolResult as { textResultForLlm?: unknown }).textResultForLlm);
  return text === undefined ? undefined : { stdout: text };
}

/**
 * Normalises a Copilot CLI hook payload. The reply is not in agentStop's payload: it is read from the session's
 * events file (`transcriptPath`), once; when Copilot has not written this agentStop's record there yet, the reply
 * is due (read at the session's next hook) instead of waited for.
 */
export function parseCopilotHookInput(event: AgentEvent, raw: unknown): HookInput {
  const p = checkPayload(raw, PAYLOAD);
  const args = argsOf(p.toolArgs);
  const command = args && typeof args === "object" ? str((args as { command?: unknown }).command) : undefined;
  const transcriptPath = str(p.transcriptPath);
  const stamp = typeof p.timestamp === "number" && Number.isSafeInteger(p.timestamp) ? p.timestamp : undefined;
  const found = event === "stop" ? copilotReply(transcriptPath, stamp) : undefined;
  return {
    agent: "copilot",
    event,
    sessionId: p.sessionId as string,
    cwd: str(p.cwd),
    transcriptPath,
    prompt: str(p.prompt),
    stopHookActive: p.stop_hook_active as boolean | undefined,
    lastAssistantMessage: found?.ready ? found.reply : undefined,
    replyDue: found && !found.ready && transcriptPath && stamp !== undefined ? { path: transcriptPath, stamp } : undefined,
    toolName: str(p.toolName),
    toolCommand: command,
    toolInput: args,
    toolResponse: resultOf(p.toolResult),
    toolError: p.error && typeof p.error === "object" ? str((p.error as { message?: unknown }).message) : str(p.error),
    source: str(p.source),
    reason: str(p.reason),
  };
}

/**
 * What Copilot reads from a hook's stdout: `additionalContext` at the top level (sessionStart, postToolUse), and
 * agentStop's `{decision, reason}` as Claude Code's; the core's Claude-shaped context is lifted out of
 * `hookSpecificOutput`.
 */
export function copilotHookOutput(out: Record<string, unknown>): Record<string, unknown> {
  const specific = out.hookSpecificOutput as { additionalContext?: unknown } | undefined;
  if (!specific || typeof specific.additionalContext !== "string") return out;
  const { hookSpecificOutput: _, ...rest } = out;
  return { ...rest, additionalContext: specific.additionalContext };
}
