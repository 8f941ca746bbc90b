import { Database } from "bun:sqlite";
import { homedir } from "node:os";
import { join } from "node:path";
import { opencodePrompt } from "../../agents/opencode/index.ts";
import { clipOutput, type PastEvent, type PastSessionMeta } from "./events.ts";
import { insideRoots, type FoundTranscript } from "./locate.ts";

/*
 * OpenCode keeps its sessions in one SQLite database (`$XDG_DATA_HOME/opencode/opencode.db`, by default under
 * ~/.local/share; 1.18): `session(id, parent_id, directory, time_updated)`, `message(id, session_id, time_created,
 * data)` with `data.role` user or assistant, and `part(id, message_id, session_id, time_created, data)`: a text part
 * `{type: "text", text, synthetic?}`, a tool call `{type: "tool", tool: "bash", state: {status, input: {command},
 * output, metadata: {exit}, time: {start, end}}}`. A subagent works in a child session (`parent_id`): its commands
 * count for the top session, its prompts and replies (the parent agent's instructions and notes) do not.
 */

type Rec = Record<string, unknown>;

/** Where OpenCode keeps its database. */
export function opencodeDatabase(env: Record<string, string | undefined>): string {
  return join(env.XDG_DATA_HOME || join(env.HOME || homedir(), ".local", "share"), "opencode", "opencode.db");
}

function open(path: string): Database | null {
  try {
    return new Database(path, { readonly: true });
  } catch {
    return null;
  }
}

function parse(text: unknown): Rec | null {
  if (typeof text !== "string") return null;
  try {
    const v = JSON.parse(text) as unknown;
    return v && typeof v === "object" && !Array.isArray(v) ? (v as Rec) : null;
  } catch {
    return null;
  }
}

/** The top sessions OpenCode ran in one of `roots` (each a transcript of its own: `path` is the database). */
export function findOpenCodeSessions(roots: string[], env: Record<string, string | undefined>): FoundTranscript[] {
  const path = opencodeDatabase(env);
  const db = open(path);
  if (!db) return [];
  try {
    const rows = db.query("SELECT id, directory, time_updated FROM session WHERE parent_id IS NULL").all() as { id: string; directory: string; time_updated: number }[];
    const out: FoundTranscript[] = [];
    for (const r of rows) {
      if (typeof r.directory === "string" && insideRoots(r.directory, roots)) {
        out.push({ path, agent: "opencode", mtimeMs: Number(r.time_updated) || 0, cwd: r.directory, sessionId: r.id });
      }
    }
    return out;
  } catch {
    return [];
  } finally {
    db.close();
  }
}

/** The events of one tool part: a bash call that ran to its end. */
function shellEvent(part: Rec, time: number): PastEvent | null {
  const state = part.state as Rec | undefined;
  if (part.tool !== "bash" || !state || (state.status !== "completed" && state.status !== "error")) return null;
  const command = (state.input as Rec | undefined)?.command;
  if (typeof command !== "string") return null;
  const metadata = state.metadata as Rec | undefined;
  const output = typeof state.output === "string" ? state.output : typeof metadata?.output === "string" ? metadata.output : "";
  const times = state.time as Rec | undefined;
  const start = typeof times?.start === "number" ? times.start : time;
  const end = typeof times?.end === "number" ? times.end : start;
  const exit = metadata?.exit;
  return { kind: "shell", command, output: clipOutput(output), failed: state.status === "error" || (typeof exit === "number" && exit !== 0), start, end };
}

/** Reads one top session of OpenCode's database and its subagents' sessions, in the order things happened. */
export function readOpenCodeSession(path: string, sessionId: string, cwd: string | null): { meta: PastSessionMeta; events: PastEvent[] } {
  const meta: PastSessionMeta = { sessionId, cwd, branch: null, agent: "opencode", firstTime: null, lastTime: null };
  const db = open(path);
  if (!db) throw new Error("OpenCode's database cannot be opened");
  try {
    const family = [sessionId];
    for (let i = 0; i < family.length && family.length < 10_000; i++) {
      for (const r of db.query("SELECT id FROM session WHERE parent_id = ?").all(family[i]!) as { id: string }[]) family.push(r.id);
    }
    const marks = family.map(() => "?").join(",");
    const roles = new Map<string, { role: unknown; top: boolean }>();
    const messages = db.query(`SELECT id, session_id, data FROM message WHERE session_id IN (${marks})`).all(...family) as { id: string; session_id: string; data: string }[];
    for (const m of messages) roles.set(m.id, { role: parse(m.data)?.role, top: m.session_id === sessionId });
    const parts = db
      .query(`SELECT id, message_id, time_created, data FROM part WHERE session_id IN (${marks}) ORDER BY time_created, id`)
      .all(...family) as { id: string; message_id: string; time_created: number; data: string }[];
    const events: PastEvent[] = [];
    const prompted = new Set<string>();
    for (const p of parts) {
      const part = parse(p.data);
      const message = roles.get(p.message_id);
      if (!part || !message) continue;
      const time = Number(p.time_created);
      meta.firstTime ??= time;
      meta.lastTime = time;
      if (part.type === "tool") {
        const shell = shellEvent(part, time);
        if (shell) events.push(shell);
      } else if (part.type === "text" && message.top && part.synthetic !== true && typeof part.text === "string" && part.text.trim()) {
        if (message.role === "assistant") events.push({ kind: "assistant", text: part.text, time });
        else if (message.role === "user" && !prompted.has(p.message_id)) {
          // the first text part the user wrote is the prompt, as the live plugin records it
          prompted.add(p.message_id);
          const text = opencodePrompt({ parts: [part] });
          if (text) events.push({ kind: "prompt", text, time });
        }
      }
    }
    return { meta, events };
  } finally {
    db.close();
  }
}
