import { BlockReader, typedPrompt } from "./claude.ts";
import { jsonlRecords, noteTime, timeOf, type OnLongLine, type PastEvent, type PastSessionMeta } from "./events.ts";

/*
 * Factory Droid sessions (`~/.factory/sessions/<cwd with / as ->/<session>.jsonl`): a first `session_start` line
 * `{id, title, owner, cwd}`, then `message` lines `{id, timestamp, message: {role, content}}` whose content is
 * Claude Code's blocks (text, tool_use, tool_result); the shell tool is `Execute`, the question tool `AskUser`.
 */

/** Reads one Factory Droid session file: its session facts and its events, streamed. */
export async function readDroidSession(path: string, onLongLine?: OnLongLine): Promise<{ meta: PastSessionMeta; events: PastEvent[] }> {
  const meta: PastSessionMeta = { sessionId: null, cwd: null, branch: null, agent: "droid", firstTime: null, lastTime: null };
  const reader = new BlockReader(["Execute"], ["AskUser"]);
  for await (const rec of jsonlRecords(path, onLongLine)) {
    if (rec.type === "session_start") {
      if (typeof rec.id === "string") meta.sessionId ??= rec.id;
      if (typeof rec.cwd === "string") meta.cwd ??= rec.cwd;
      continue;
    }
    const message = rec.message as { role?: unknown; content?: unknown } | undefined;
    if (rec.type !== "message" || !message) continue;
    const time = timeOf(rec.timestamp);
    noteTime(meta, time);
    if (message.role === "assistant") {
      reader.assistant(message.content, time, { cwd: meta.cwd ?? undefined });
      continue;
    }
    if (message.role !== "user") continue;
    const prompt = typedPrompt({ message });
    if (prompt !== null) reader.events.push({ kind: "prompt", text: prompt, time });
    else reader.results(message.content, time, rec);
  }
  return { meta, events: reader.events };
}
