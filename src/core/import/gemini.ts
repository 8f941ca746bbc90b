import { geminiUserPrompt } from "../../agents/gemini/index.ts";
import { clipOutput, jsonlRecords, timeOf, type OnLongLine, type PastEvent, type PastSessionMeta } from "./events.ts";

/*
 * Gemini CLI chats (`~/.gemini/tmp/<project>/chats/session-*.jsonl`, 0.61): a first line with `sessionId`, then
 * message lines `{id, timestamp, type: "user"|"gemini", content, toolCalls?}` (a message written again under the same
 * id replaces the earlier one) and `{"$set": …}` updates of the session's fields. A resumed session writes a new
 * file whose `$set.messages` repeats the history in another shape: only message lines are read. A shell call is a
 * `toolCalls` item `run_shell_command` with `args.command`, its `status`, end `timestamp` and `result` parts.
 */

type Rec = Record<string, unknown>;

function textOf(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  let out = "";
  for (const part of content) {
    if (part && typeof part === "object" && typeof (part as Rec).text === "string") out += (out ? "\n" : "") + (part as { text: string }).text;
  }
  return out;
}

function outputOf(result: unknown): string {
  if (!Array.isArray(result)) return "";
  let out = "";
  for (const part of result) {
    const response = ((part as Rec | null)?.functionResponse as Rec | undefined)?.response as Rec | undefined;
    if (typeof response?.output === "string") out += response.output;
    else if (typeof response?.error === "string") out += response.error;
  }
  return out;
}

function eventsOf(m: Rec): PastEvent[] {
  const time = timeOf(m.timestamp);
  const out: PastEvent[] = [];
  if (m.type === "user") {
    const text = geminiUserPrompt(textOf(m.content));
    // the context Gemini itself adds at the start of a session is not the user's
    if (text && text.trim() && !text.startsWith("<session_context>")) out.push({ kind: "prompt", text, time });
    return out;
  }
  if (m.type !== "gemini") return out;
  const text = textOf(m.content);
  if (text.trim()) out.push({ kind: "assistant", text, time });
  if (!Array.isArray(m.toolCalls)) return out;
  for (const call of m.toolCalls as Rec[]) {
    const command = (call?.args as Rec | undefined)?.command;
    if (call?.name !== "run_shell_command" || typeof command !== "string") continue;
    const end = timeOf(call.timestamp);
    out.push({
      kind: "shell",
      command,
      output: clipOutput(outputOf(call.result)),
      failed: call.status === "error",
      start: time,
      end: Number.isFinite(end) ? end : time,
    });
  }
  return out;
}

/** Reads one Gemini CLI chat file: its session facts (the cwd is the project's, given by the caller) and events. */
export async function readGeminiChat(path: string, cwd: string | null, onLongLine?: OnLongLine): Promise<{ meta: PastSessionMeta; events: PastEvent[] }> {
  const meta: PastSessionMeta = { sessionId: null, cwd, branch: null, agent: "gemini", firstTime: null, lastTime: null };
  const messages = new Map<string, Rec>();
  for await (const rec of jsonlRecords(path, onLongLine)) {
    if (typeof rec.sessionId === "string" && !("type" in rec)) {
      meta.sessionId ??= rec.sessionId;
      continue;
    }
    if (typeof rec.id !== "string" || typeof rec.type !== "string") continue;
    const time = timeOf(rec.timestamp);
    if (Number.isFinite(time)) {
      meta.firstTime ??= time;
      meta.lastTime = time;
    }
    // written again under its id (a reply, then the same reply with its tool calls): the later one counts, in place
    messages.set(rec.id, rec);
  }
  const events: PastEvent[] = [];
  for (const m of messages.values()) events.push(...eventsOf(m));
  return { meta, events };
}
