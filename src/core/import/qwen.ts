import { clipOutput, jsonlRecords, noteTime, timeOf, type OnLongLine, type PastEvent, type PastSessionMeta } from "./events.ts";

/*
 * Qwen Code chats (`<QWEN_RUNTIME_DIR, QWEN_HOME or ~/.qwen>/projects/<cwd, non-alphanumerics as ->/chats/<session>.jsonl`,
 * 0.24): lines `{uuid, sessionId, timestamp, type, cwd, gitBranch, message: {role, parts}}` with Gemini's parts.
 * What the user typed is a `user` line of `provenance` `real_user` (older lines have none), without a subtype or
 * typed during a turn (`mid_turn_user_message`); a reply
 * is an `assistant` line's text parts (not thoughts), a shell call its `functionCall` part `run_shell_command`,
 * answered by a `tool_result` line's `functionResponse` under the same id (`toolCallResult.status`).
 */

type Rec = Record<string, unknown>;

function parts(message: unknown): Rec[] {
  const p = (message as Rec | undefined)?.parts;
  return Array.isArray(p) ? (p.filter((x) => x && typeof x === "object") as Rec[]) : [];
}

function textOf(message: unknown): string {
  let out = "";
  for (const p of parts(message)) if (typeof p.text === "string" && p.thought !== true) out += (out ? "\n" : "") + p.text;
  return out;
}

/** Reads one Qwen Code chat file: its session facts and its events, streamed. */
export async function readQwenChat(path: string, onLongLine?: OnLongLine): Promise<{ meta: PastSessionMeta; events: PastEvent[] }> {
  const meta: PastSessionMeta = { sessionId: null, cwd: null, branch: null, agent: "qwen", firstTime: null, lastTime: null };
  const events: PastEvent[] = [];
  const calls = new Map<string, { command: string; time: number; cwd?: string; branch?: string }>();
  for await (const rec of jsonlRecords(path, onLongLine)) {
    const time = timeOf(rec.timestamp);
    noteTime(meta, time);
    if (typeof rec.sessionId === "string") meta.sessionId ??= rec.sessionId;
    if (typeof rec.cwd === "string") meta.cwd ??= rec.cwd;
    if (typeof rec.gitBranch === "string" && rec.gitBranch) meta.branch = rec.gitBranch;
    if (rec.type === "user") {
      const typed = rec.subtype === undefined || rec.subtype === "mid_turn_user_message";
      if (!typed || (rec.provenance !== undefined && rec.provenance !== "real_user")) continue;
      const text = textOf(rec.message);
      if (text.trim()) events.push({ kind: "prompt", text, time });
    } else if (rec.type === "assistant" && rec.subtype === undefined) {
      const text = textOf(rec.message);
      if (text.trim()) events.push({ kind: "assistant", text, time });
      for (const p of parts(rec.message)) {
        const call = p.functionCall as Rec | undefined;
        const command = (call?.args as Rec | undefined)?.command;
        if (call?.name !== "run_shell_command" || typeof call.id !== "string" || typeof command !== "string") continue;
        calls.set(call.id, {
          command,
          time,
          cwd: typeof rec.cwd === "string" ? rec.cwd : undefined,
          branch: typeof rec.gitBranch === "string" ? rec.gitBranch : undefined,
        });
      }
    } else if (rec.type === "tool_result") {
      for (const p of parts(rec.message)) {
        const response = p.functionResponse as Rec | undefined;
        const call = typeof response?.id === "string" ? calls.get(response.id) : undefined;
        if (!call) continue;
        calls.delete(response!.id as string);
        const out = (response!.response ?? {}) as Rec;
        const text = typeof out.output === "string" ? out.output : typeof out.error === "string" ? out.error : "";
        const status = (rec.toolCallResult as Rec | undefined)?.status;
        events.push({ kind: "shell", command: call.command, output: clipOutput(text), failed: status === "error", start: call.time, end: time, cwd: call.cwd, branch: call.branch });
      }
    }
  }
  return { meta, events };
}
