/*
 * Past sessions, read from the agents' own transcript files as a stream of agent-neutral events: the prompts the
 * user typed, the agent's replies, AskUserQuestion answers and shell commands with their output. Replaying them
 * the way the live hooks would have seen them gives the same conversation lines and the same cuts.
 */
import { closeSync, openSync, readSync } from "node:fs";
import type { AgentName } from "../../agents/types.ts";

/** One thing that happened in a past session, in transcript order. */
export type PastEvent =
  | { kind: "prompt"; text: string; time: number }
  | { kind: "assistant"; text: string; time: number }
  | { kind: "question"; answers: { question: string; answer: string }[]; time: number }
  | { kind: "shell"; command: string; output: string; failed: boolean; start: number; end: number; cwd?: string; branch?: string };

/** What a transcript says about its session besides events. */
export interface PastSessionMeta {
  sessionId: string | null;
  cwd: string | null;
  branch: string | null;
  agent: AgentName;
  firstTime: number | null;
  lastTime: number | null;
}

/** Milliseconds of an ISO timestamp, or NaN. */
export function timeOf(value: unknown): number {
  return typeof value === "string" ? Date.parse(value) : Number.NaN;
}

/** Widens a session's first and last times to a line's time. */
export function noteTime(meta: PastSessionMeta, time: number): void {
  if (!Number.isFinite(time)) return;
  meta.firstTime ??= time;
  meta.lastTime = time;
}

/** Keeps the head and tail of a command's output: git's `[branch sha] subject` lines sit in one or the other. */
export function clipOutput(text: string, max = 16384): string {
  if (text.length <= max) return text;
  return `${text.slice(0, max / 2)}\n…\n${text.slice(-max / 2)}`;
}

/** Lines longer than this are skipped (a transcript line is rarely above a few megabytes; images included). */
export const MAX_TRANSCRIPT_LINE = 32 * 1024 * 1024;

/** Hears of a transcript line skipped for its length. */
export type OnLongLine = (bytes: number, line: number) => void;

/**
 * Reads a JSONL file line by line without holding it whole; a line holding two glued records yields both. A line
 * longer than MAX_TRANSCRIPT_LINE is skipped (reported to `onLongLine`) without ever being held whole.
 */
export async function* jsonlRecords(path: string, onLongLine: OnLongLine = () => {}): AsyncGenerator<Record<string, unknown>> {
  const { splitConcatenatedJson } = await import("../../util/jsonl.ts");
  const { LineReader } = await import("../../util/lines.ts");
  const decoder = new TextDecoder();
  const reader = new LineReader(MAX_TRANSCRIPT_LINE, onLongLine);
  const parse = function* (bytes: Uint8Array): Generator<Record<string, unknown>> {
    const line = decoder.decode(bytes);
    if (!line.trim()) return;
    try {
      const v = JSON.parse(line);
      if (v && typeof v === "object" && !Array.isArray(v)) yield v as Record<string, unknown>;
      return;
    } catch {
      // two records glued on one line (seen after resumed sessions): split them below
    }
    for (const part of splitConcatenatedJson(line)) {
      try {
        const v = JSON.parse(part);
        if (v && typeof v === "object" && !Array.isArray(v)) yield v as Record<string, unknown>;
      } catch {
        // a torn or foreign line says nothing; the rest of the file still counts
      }
    }
  };
  // one buffer read into again and again, synchronously: a long line leaves no trail of chunks behind for the
  // collector (a stream's chunks, and Bun's promise reads, add about 20 MB of peak memory per 100 MB read)
  const fd = openSync(path, "r");
  try {
    const buf = new Uint8Array(64 * 1024);
    for (let n = readSync(fd, buf, 0, buf.length, null); n > 0; n = readSync(fd, buf, 0, buf.length, null)) {
      for (const line of reader.push(buf.subarray(0, n))) yield* parse(line);
    }
    for (const line of reader.end()) yield* parse(line);
  } finally {
    closeSync(fd);
  }
}
