import { closeSync, fstatSync, openSync, readSync } from "node:fs";

/** How much of the end of a session's events file is read for the last reply. */
const TAIL_BYTES = 512 * 1024;

/**
 * The assistant's last reply of a turn in a Copilot CLI events file (`~/.copilot/session-state/<id>/events.jsonl`,
 * `{type, data}` lines): the newest `assistant.message` with text after the newest `user.message`, before this
 * agentStop's own record. Copilot records each hook call there (`hook.start`, with the payload's `timestamp`) after
 * the turn's messages, but writes it behind the call: with `stamp`, `ready` says whether that record is in yet (when
 * it is not, the reply found may be an earlier turn's; read again at the session's next hook). The turn's last message
 * may also come after that record (then it is taken up to the next user message). Without `stamp`, or
 * when the path is not a readable `.jsonl` file, the answer is ready as it is (undefined: no reply).
 */
export function copilotReply(path: string | undefined, stamp?: number): { reply?: string; ready: boolean } {
  if (!path || !path.endsWith(".jsonl")) return { ready: true };
  return readReply(path, stamp);
}

function readTail(path: string): string | undefined {
  let fd: number | undefined;
  try {
    fd = openSync(path, "r");
    const st = fstatSync(fd);
    if (!st.isFile()) return undefined;
    const start = Math.max(0, st.size - TAIL_BYTES);
    const buf = new Uint8Array(st.size - start);
    readSync(fd, buf, 0, buf.length, start);
    return new TextDecoder().decode(buf);
  } catch {
    return undefined;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

/** The reply before this agentStop's own record (or, without `stamp`, before the end); ready once that record is in. */
function readReply(path: string, stamp: number | undefined): { reply?: string; ready: boolean } {
  const text = readTail(path);
  if (text === undefined) return { ready: true };
  const lines = text.split("\n");
  const marker = stamp === undefined ? undefined : `"timestamp":${stamp}`;
  let at = lines.length - 1;
  if (marker !== undefined) {
    while (at >= 0 && !(lines[at]!.includes('"hook.start"') && lines[at]!.includes('"agentStop"') && lines[at]!.includes(marker))) at--;
    if (at < 0) return { ready: false };
  }
  for (let i = at; i >= 0; i--) {
    const rec = message(lines[i]!);
    if (rec === "user") break;
    if (rec !== undefined) return { reply: rec.reply, ready: true };
  }
  if (marker === undefined) return { ready: true };
  // Copilot at times records the turn's last message after this agentStop's own record: it is this turn's reply
  // when it comes before the next user message; with no next user message yet, more of the turn may still come
  let reply: string | undefined;
  for (let i = at + 1; i < lines.length; i++) {
    const rec = message(lines[i]!);
    if (rec === "user") return { reply, ready: true };
    if (rec !== undefined) reply = rec.reply;
  }
  return reply === undefined ? { ready: false } : { reply, ready: true };
}

/** A user message, an assistant message with text (its reply), or undefined for any other line. */
function message(line: string): "user" | { reply: string } | undefined {
  if (!line.includes('"assistant.message"') && !line.includes('"user.message"')) return undefined;
  let rec: { type?: unknown; data?: { content?: unknown } };
  try {
    rec = JSON.parse(line);
  } catch {
    return undefined;
  }
  if (rec.type === "user.message") return "user";
  const content = rec.data?.content;
  return rec.type === "assistant.message" && typeof content === "string" && content.trim() !== "" ? { reply: content } : undefined;
}
