import { BlockReader, typedPrompt } from "./claude.ts";
import { jsonlRecords, type OnLongLine, type PastEvent, type PastSessionMeta } from "./events.ts";

/*
 * Cursor agent transcripts (`~/.cursor/projects/<workspace path, / stripped, others as ->/agent-transcripts/<id>.jsonl`,
 * the IDE's `<id>/<id>.jsonl`): `{role, message: {content}}` lines of Claude Code's blocks, without times, ids or
 * tool results. A typed prompt is wrapped in `<user_query>` (after a `<timestamp>` at times); the shell tool is
 * `Shell`. With no times, a commit is matched by the message its command names (see replaySession's `until`).
 */

/** What the user typed, out of Cursor's `<timestamp>…</timestamp><user_query>…</user_query>` wrapping. */
export function cursorPrompt(text: string): string {
  const query = /<user_query>\n?([\s\S]*?)\n?<\/user_query>/.exec(text);
  return query ? query[1]! : text.replace(/^\s*<timestamp>[\s\S]*?<\/timestamp>\s*/, "");
}

/** Reads one Cursor transcript (no times: the file's mtime, given by the caller, is its last). */
export async function readCursorTranscript(path: string, mtimeMs: number, onLongLine?: OnLongLine): Promise<{ meta: PastSessionMeta; events: PastEvent[] }> {
  const meta: PastSessionMeta = { sessionId: null, cwd: null, branch: null, agent: "cursor", firstTime: null, lastTime: mtimeMs };
  const reader = new BlockReader(["Shell"]);
  for await (const rec of jsonlRecords(path, onLongLine)) {
    const message = rec.message as { content?: unknown } | undefined;
    if (!message || (rec.role !== "user" && rec.role !== "assistant")) continue;
    if (rec.role === "assistant") {
      reader.assistant(message.content, Number.NaN);
      continue;
    }
    const typed = typedPrompt({ message: { role: "user", content: message.content } });
    if (typed === null) {
      reader.results(message.content, Number.NaN, rec);
      continue;
    }
    const prompt = cursorPrompt(typed);
    if (prompt.trim()) reader.events.push({ kind: "prompt", text: prompt, time: Number.NaN });
  }
  return { meta, events: reader.events };
}
