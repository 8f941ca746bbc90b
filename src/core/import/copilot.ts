import { clipOutput, jsonlRecords, noteTime, timeOf, type OnLongLine, type PastEvent, type PastSessionMeta } from "./events.ts";

/*
 * GitHub Copilot CLI sessions (`~/.copilot/session-state/<id>/events.jsonl`, `$COPILOT_HOME`, 1.0): `{type, data,
 * id, timestamp}` lines. `session.start` holds the id and `context.cwd`/`branch`; `user.message` what the user typed
 * (`content`; `transformedContent` is what the model saw); `assistant.message` a reply (`content`, empty beside
 * tool requests); a shell call is `tool.execution_start` (`toolName` `bash`, `arguments.command`) answered by
 * `tool.execution_complete` (`success`, `result.content`) under the same `toolCallId`.
 */

type Rec = Record<string, unknown>;

const SHELL_TOOLS = ["bash", "shell", "powershell"];

/** Reads one Copilot CLI events file: its session facts and its events, streamed. */
export async function readCopilotEvents(path: string, onLongLine?: OnLongLine): Promise<{ meta: PastSessionMeta; events: PastEvent[] }> {
  const meta: PastSessionMeta = { sessionId: null, cwd: null, branch: null, agent: "copilot", firstTime: null, lastTime: null };
  const events: PastEvent[] = [];
  const calls = new Map<string, { command: string; time: number }>();
  for await (const rec of jsonlRecords(path, onLongLine)) {
    const d = (rec.data && typeof rec.data === "object" ? rec.data : {}) as Rec;
    const time = timeOf(rec.timestamp);
    noteTime(meta, time);
    if (rec.type === "session.start") {
      if (typeof d.sessionId === "string") meta.sessionId ??= d.sessionId;
      const context = (d.context ?? {}) as Rec;
      if (typeof context.cwd === "string") meta.cwd ??= context.cwd;
      if (typeof context.branch === "string" && context.branch) meta.branch = context.branch;
    } else if (rec.type === "user.message") {
      if (typeof d.content === "string" && d.content.trim()) events.push({ kind: "prompt", text: d.content, time });
    } else if (rec.type === "assistant.message") {
      if (typeof d.content === "string" && d.content.trim()) events.push({ kind: "assistant", text: d.content, time });
    } else if (rec.type === "tool.execution_start" && typeof d.toolCallId === "string") {
      const command = (d.arguments as Rec | undefined)?.command;
      if (typeof d.toolName === "string" && SHELL_TOOLS.includes(d.toolName) && typeof command === "string") calls.set(d.toolCallId, { command, time });
    } else if (rec.type === "tool.execution_complete" && typeof d.toolCallId === "string") {
      const call = calls.get(d.toolCallId);
      if (!call) continue;
      calls.delete(d.toolCallId);
      const result = (d.result ?? {}) as Rec;
      const output = typeof result.content === "string" ? result.content : typeof d.error === "string" ? d.error : "";
      events.push({ kind: "shell", command: call.command, output: clipOutput(output), failed: d.success === false, start: call.time, end: time });
    }
  }
  return { meta, events };
}

/** The cwd a Copilot events file's `session.start` names, from its first lines. */
export async function peekCopilotCwd(path: string): Promise<string | null> {
  let n = 0;
  for await (const rec of jsonlRecords(path)) {
    if (rec.type === "session.start") {
      const cwd = ((rec.data as Rec | undefined)?.context as Rec | undefined)?.cwd;
      return typeof cwd === "string" ? cwd : null;
    }
    if (++n > 20) break;
  }
  return null;
}
