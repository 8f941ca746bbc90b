import { closeSync, fstatSync, openSync, readSync } from "node:fs";
import { parseJsonl } from "../util/jsonl.ts";

/** How much of a transcript's end is read to find the last reply; transcripts can be hundreds of MB. */
const TAIL_BYTES = 4 * 1024 * 1024;

/** The text of a transcript record's message when it is an assistant message with text; else undefined. */
export function assistantText(record: unknown): string | undefined {
  if (!record || typeof record !== "object") return undefined;
  // Claude Code: `{type, message: {role, content}}`; Cursor's agent transcripts: `{role, message: {content}}`
  const r = record as { type?: unknown; role?: unknown; message?: { role?: unknown; content?: unknown } };
  const role = r.message?.role ?? r.type ?? r.role;
  if (role !== "assistant" || (r.type !== undefined && r.type !== "assistant")) return undefined;
  const content = r.message?.content;
  if (typeof content === "string") return content.trim() ? content : undefined;
  if (!Array.isArray(content)) return undefined;
  const texts = content
    .filter((b): b is { type: "text"; text: string } => b?.type === "text" && typeof b.text === "string")
    .map((b) => b.text)
    .filter((t) => t.trim() !== "");
  return texts.length ? texts.join("\n") : undefined;
}

/** Reads at most the last `max` bytes of a file, dropping a partial first line. */
export function readTail(path: string, max = TAIL_BYTES): string {
  const fd = openSync(path, "r");
  try {
    const size = fstatSync(fd).size;
    const start = Math.max(0, size - max);
    const buf = Buffer.alloc(size - start);
    let off = 0;
    while (off < buf.length) {
      const n = readSync(fd, buf, off, buf.length - off, start + off);
      if (n <= 0) break;
      off += n;
    }
    let text = buf.subarray(0, off).toString("utf8");
    if (start > 0) text = text.slice(text.indexOf("\n") + 1);
    return text;
  } finally {
    closeSync(fd);
  }
}

/** The last assistant text block in a Claude Code (or Cursor) transcript file, or undefined. */
export function lastAssistantTextInTranscript(path: string): string | undefined {
  const records = parseJsonl(readTail(path));
  for (let i = records.length - 1; i >= 0; i--) {
    const text = assistantText(records[i]);
    if (text !== undefined) return text;
  }
  return undefined;
}
