/**
 * Benchmark text taken from real conversations: the Claude Code transcripts in `test/fixtures/claude-code` (prompts,
 * replies, thinking, tool calls and their output — prose, code, paths, hashes and numbers as they were). The
 * made-up vocabulary of `Prose` gives a full-text index a few thousand distinct tokens; this gives it the tens of
 * thousands a real history has. Text is cut into pieces (lines, or sentences of long lines) and drawn in runs of
 * consecutive pieces, so a text reads like a stretch of one conversation, not a shuffle of words.
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { rng } from "./rng.ts";

const FIXTURES = join(import.meta.dir, "..", "test", "fixtures", "claude-code");

/** Every `.jsonl` file under `dir`, in a stable order. */
function transcripts(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir).sort()) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) out.push(...transcripts(path));
    else if (name.endsWith(".jsonl")) out.push(path);
  }
  return out;
}

/** The text of one content block or content value, as the conversation carried it. */
function blockText(value: unknown): string[] {
  if (typeof value === "string") return [value];
  if (Array.isArray(value)) return value.flatMap(blockText);
  if (!value || typeof value !== "object") return [];
  const b = value as Record<string, unknown>;
  if (typeof b.text === "string") return [b.text];
  if (typeof b.thinking === "string") return [b.thinking];
  if (b.type === "tool_use" && b.input && typeof b.input === "object") {
    return Object.values(b.input as Record<string, unknown>).filter((v): v is string => typeof v === "string");
  }
  if (b.type === "tool_result") return blockText(b.content);
  return [];
}

/** One turn of a real conversation: who spoke, and the texts of that line. */
export interface Turn {
  role: "user" | "assistant";
  text: string;
}

let cached: Turn[] | null = null;

/** All turns of the fixture transcripts, in file order (read once per process). */
export function realTurns(): Turn[] {
  if (cached) return cached;
  const turns: Turn[] = [];
  for (const file of transcripts(FIXTURES)) {
    for (const raw of readFileSync(file, "utf8").split("\n")) {
      if (!raw.startsWith("{")) continue;
      let line: { type?: string; message?: { role?: string; content?: unknown } };
      try {
        line = JSON.parse(raw);
      } catch {
        continue;
      }
      const role = line.message?.role;
      if (role !== "user" && role !== "assistant") continue;
      const text = blockText(line.message?.content).join("\n").trim();
      if (text.length >= 2) turns.push({ role, text });
    }
  }
  cached = turns;
  return turns;
}

/** Cuts text into pieces of at most about 300 characters: lines, and long lines at sentence ends. */
function pieces(text: string): string[] {
  const out: string[] = [];
  for (const line of text.split("\n")) {
    const t = line.trimEnd();
    if (!t.trim()) continue;
    if (t.length <= 300) {
      out.push(t);
      continue;
    }
    let rest = t;
    while (rest.length > 300) {
      const cut = rest.lastIndexOf(". ", 300);
      const at = cut > 40 ? cut + 1 : 300;
      out.push(rest.slice(0, at).trim());
      rest = rest.slice(at);
    }
    if (rest.trim()) out.push(rest.trim());
  }
  return out;
}

/**
 * A seeded source of real text with the interface of `Prose` (`int`, `text`), so the same data builders can use
 * either. Every run with the same seed draws the same text.
 */
export class RealText {
  private r: () => number;
  private pool: string[];
  constructor(seed = 1) {
    this.r = rng(seed);
    this.pool = realTurns().flatMap((t) => pieces(t.text));
    if (this.pool.length < 1000) throw new Error(`too little real text under ${FIXTURES}`);
  }
  int(n: number): number {
    return Math.floor(this.r() * n);
  }
  /** About `chars` characters: a run of consecutive pieces from a random place, joined as lines. */
  text(chars: number): string {
    const out: string[] = [];
    let len = 0;
    let at = this.int(this.pool.length);
    while (len < chars) {
      const piece = this.pool[at]!;
      const room = chars - len;
      out.push(piece.length > room + 80 ? piece.slice(0, Math.max(room, 20)) : piece);
      len += Math.min(piece.length, room + 80) + 1;
      at = (at + 1) % this.pool.length;
    }
    return out.join("\n");
  }
  /** About `bytes` bytes of a transcript: consecutive real turns as conversation lines, from a random place. */
  transcript(bytes: number): string {
    const turns = realTurns();
    let out = "";
    let at = this.int(turns.length);
    while (out.length < bytes) {
      const t = turns[at]!;
      out += `${JSON.stringify({ role: t.role, content: t.text.slice(0, 6000) })}\n`;
      at = (at + 1) % turns.length;
    }
    return out;
  }
}
