/*
 * Past sessions, read from the agents' own transcript files as a stream of agent-neutral events: the prompts the
 * user typed, the agent's replies, AskUserQuestion answers and shell commands with their output. Replaying them
 * the way the live hooks would have seen them gives the same conversation lines and the same cuts.
 */

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
  agent: "claude" | "codex";
  firstTime: number | null;
  lastTime: number | null;
}

/** Milliseconds of an ISO timestamp, or NaN. */
export function timeOf(value: unknown): number {
  return typeof value === "string" ? Date.parse(value) : Number.NaN;
}

/** Keeps the head and tail of a command's output: git's `[branch sha] subject` lines sit in one or the other. */
export function clipOutput(text: string, max = 16384): string {
  if (text.length <= max) return text;
  return `${text.slice(0, max / 2)}\n…\n${text.slice(-max / 2)}`;
}

/** Reads a JSONL file line by line without holding it whole; a line holding two glued records yields both. */
export async function* jsonlRecords(path: string): AsyncGenerator<Record<string, unknown>> {
  const { splitConcatenatedJson } = await import("../../util/jsonl.ts");
  const file = Bun.file(path);
  const decoder = new TextDecoder();
  let carry = "";
  const parse = function* (line: string): Generator<Record<string, unknown>> {
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
  for await (const chunk of file.stream()) {
    carry += decoder.decode(chunk, { stream: true });
    let nl = carry.indexOf("\n");
    let start = 0;
    while (nl >= 0) {
      yield* parse(carry.slice(start, nl));
      start = nl + 1;
      nl = carry.indexOf("\n", start);
    }
    carry = carry.slice(start);
  }
  carry += decoder.decode();
  yield* parse(carry);
}
