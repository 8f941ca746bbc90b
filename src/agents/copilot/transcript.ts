import { closeSync, fstatSync, openSync, readSync } from "node:fs";

/** How much of the end of a session's events file is read for the last reply. */
const TAIL_BYTES = 512 * 1024;

/**
 * The assistant's last reply of the current turn in a Copilot CLI events file
 * (`~/.copilot/session-state/<id>/events.jsonl`, `{type, data}` lines): the newest `assistant.message` with text
 * after the newest `user.message`. Undefined when there is none, or the path is not a readable `.jsonl` file.
 */
export function lastCopilotReply(path: string | undefined): string | undefined {
  if (!path || !path.endsWith(".jsonl")) return undefined;
  let text: string;
  let fd: number | undefined;
  try {
    fd = openSync(path, "r");
    const st = fstatSync(fd);
    if (!st.isFile()) return undefined;
    const start = Math.max(0, st.size - TAIL_BYTES);
    const buf = new Uint8Array(st.size - start);
    readSync(fd, buf, 0, buf.length, start);
    text = new TextDecoder().decode(buf);
  } catch {
    return undefined;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
  const lines = text.split("\n");
  for (let i = lines.length - 1; i >= 0; i--) {
    const line = lines[i]!;
    if (!line.includes('"assistant.message"') && !line.includes('"user.message"')) continue;
    let rec: { type?: unknown; data?: { content?: unknown } };
    try {
      rec = JSON.parse(line);
    } catch {
      continue;
    }
    if (rec.type === "user.message") return undefined;
    const content = rec.data?.content;
    if (typeof content === "string" && content.trim() !== "") return content;
  }
  return undefined;
}
