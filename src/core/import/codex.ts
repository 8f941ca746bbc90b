import { clipOutput, jsonlRecords, timeOf, type OnLongLine, type PastEvent, type PastSessionMeta } from "./events.ts";

/*
 * Codex rollouts (`~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl`): `{timestamp, type, payload}` lines. The
 * session's id, cwd and branch are in `session_meta`; what the user typed and the agent said are `event_msg`
 * `user_message` / `agent_message`; shell calls are `response_item` `function_call` (or `local_shell_call`) with a
 * `function_call_output` answering the same `call_id`.
 */

type Rec = Record<string, unknown>;

function commandText(value: unknown): string | null {
  if (typeof value === "string") return value;
  if (!Array.isArray(value) || !value.every((w) => typeof w === "string")) return null;
  const words = value as string[];
  // ["bash", "-lc", "<script>"]: the script is the command line
  if (words.length >= 3 && /(?:^|\/)(?:ba|z)?sh$/.test(words[0]!) && /^-\w*c$/.test(words[1]!)) return words.slice(2).join(" ");
  return words.join(" ");
}

function parseArgs(raw: unknown): Rec {
  if (raw && typeof raw === "object") return raw as Rec;
  if (typeof raw !== "string") return {};
  try {
    const v = JSON.parse(raw);
    return v && typeof v === "object" ? (v as Rec) : {};
  } catch {
    return {};
  }
}

function outputOf(raw: unknown): { text: string; failed: boolean } {
  const o = parseArgs(raw);
  if (typeof o.output === "string") {
    const code = (o.metadata as { exit_code?: unknown } | undefined)?.exit_code;
    return { text: o.output, failed: typeof code === "number" && code !== 0 };
  }
  return { text: typeof raw === "string" ? raw : "", failed: false };
}

function messageText(content: unknown): string {
  if (!Array.isArray(content)) return typeof content === "string" ? content : "";
  return content
    .filter((b): b is { text: string } => !!b && typeof b === "object" && typeof (b as Rec).text === "string")
    .map((b) => b.text)
    .join("\n");
}

/** Reads one Codex rollout: its session facts and its events, streamed. */
export async function readCodexRollout(path: string, onLongLine?: OnLongLine): Promise<{ meta: PastSessionMeta; events: PastEvent[] }> {
  const meta: PastSessionMeta = { sessionId: null, cwd: null, branch: null, agent: "codex", firstTime: null, lastTime: null };
  const events: PastEvent[] = [];
  // older rollouts have no event_msg lines: their response_item messages are the conversation instead
  const fallback: PastEvent[] = [];
  let sawEventMessages = false;
  const calls = new Map<string, { command: string; time: number; cwd?: string }>();
  for await (const rec of jsonlRecords(path, onLongLine)) {
    const time = timeOf(rec.timestamp);
    if (Number.isFinite(time)) {
      meta.firstTime ??= time;
      meta.lastTime = time;
    }
    const p = (rec.payload && typeof rec.payload === "object" ? rec.payload : {}) as Rec;
    if (rec.type === "session_meta") {
      if (typeof p.id === "string") meta.sessionId ??= p.id;
      if (typeof p.cwd === "string") meta.cwd ??= p.cwd;
      const branch = (p.git as { branch?: unknown } | undefined)?.branch;
      if (typeof branch === "string") meta.branch = branch;
      continue;
    }
    if (rec.type === "turn_context" && typeof p.cwd === "string") {
      meta.cwd ??= p.cwd;
      continue;
    }
    if (rec.type === "event_msg") {
      if (p.type === "user_message" && typeof p.message === "string" && p.message.trim()) {
        sawEventMessages = true;
        events.push({ kind: "prompt", text: p.message, time });
      } else if (p.type === "agent_message" && typeof p.message === "string" && p.message.trim()) {
        sawEventMessages = true;
        events.push({ kind: "assistant", text: p.message, time });
      }
      continue;
    }
    if (rec.type !== "response_item") continue;
    if (p.type === "message") {
      const text = messageText(p.content);
      if (!text.trim() || /^\s*<(?:environment_context|user_instructions|permissions)/.test(text)) continue;
      if (p.role === "user") fallback.push({ kind: "prompt", text, time });
      else if (p.role === "assistant") fallback.push({ kind: "assistant", text, time });
    } else if ((p.type === "function_call" || p.type === "local_shell_call") && typeof p.call_id === "string") {
      const args = p.type === "local_shell_call" ? ((p.action ?? {}) as Rec) : parseArgs(p.arguments);
      const command = commandText(args.command ?? args.cmd);
      if (command) {
        const cwd = typeof args.workdir === "string" ? args.workdir : undefined;
        calls.set(p.call_id, { command, time, cwd });
      }
    } else if (p.type === "function_call_output" && typeof p.call_id === "string") {
      const call = calls.get(p.call_id);
      if (!call) continue;
      calls.delete(p.call_id);
      const out = outputOf(p.output);
      const ev: PastEvent = { kind: "shell", command: call.command, output: clipOutput(out.text), failed: out.failed, start: call.time, end: time, cwd: call.cwd };
      events.push(ev);
      fallback.push(ev);
    }
  }
  return { meta, events: sawEventMessages ? events : fallback };
}

/** The session meta of a rollout from its first lines only (to tell whether it belongs to a repository). */
export async function peekCodexMeta(path: string): Promise<{ sessionId: string | null; cwd: string | null }> {
  let n = 0;
  for await (const rec of jsonlRecords(path)) {
    const p = (rec.payload && typeof rec.payload === "object" ? rec.payload : {}) as Rec;
    if (rec.type === "session_meta") return { sessionId: typeof p.id === "string" ? p.id : null, cwd: typeof p.cwd === "string" ? p.cwd : null };
    if (++n > 20) break;
  }
  return { sessionId: null, cwd: null };
}
