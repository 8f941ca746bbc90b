/**
 * Parses JSONL leniently: blank and broken lines are skipped, and a line holding several JSON
 * values with nothing between them (seen in resumed Claude Code transcripts) yields each of them.
 */
export function parseJsonl(text: string): unknown[] {
  const out: unknown[] = [];
  for (const line of text.split("\n")) {
    const trimmed = line.trim();
    if (!trimmed) continue;
    try {
      out.push(JSON.parse(trimmed));
    } catch {
      for (const piece of splitConcatenatedJson(trimmed)) {
        try {
          out.push(JSON.parse(piece));
        } catch {
          // a truncated or corrupt record: skip it, keep the rest
        }
      }
    }
  }
  return out;
}

/** Splits `{…}{…}` into its top-level objects/arrays, honouring strings and escapes. */
export function splitConcatenatedJson(line: string): string[] {
  const pieces: string[] = [];
  let depth = 0;
  let start = -1;
  let inString = false;
  let escaped = false;
  for (let i = 0; i < line.length; i++) {
    const c = line.charCodeAt(i);
    if (inString) {
      if (escaped) escaped = false;
      else if (c === 92 /* \ */) escaped = true;
      else if (c === 34 /* " */) inString = false;
      continue;
    }
    if (c === 34) inString = true;
    else if (c === 123 /* { */ || c === 91 /* [ */) {
      if (depth === 0) start = i;
      depth++;
    } else if (c === 125 /* } */ || c === 93 /* ] */) {
      depth--;
      if (depth === 0 && start >= 0) {
        pieces.push(line.slice(start, i + 1));
        start = -1;
      }
      if (depth < 0) depth = 0;
    }
  }
  return pieces;
}

/** What a conversation line is beside its role, when the hook knew it: an agent's question and the answer to it. */
export type LineKind = "question" | "answer";

/** One line of a conversation log or snippet (SPEC §3, §4). */
export interface ConversationLine {
  role: "user" | "assistant";
  content: string;
  kind?: LineKind;
}

/** The `{role, content, kind?}` lines of a conversation snippet (JSONL); other lines are ignored. */
export function conversationLines(snippet: string): ConversationLine[] {
  return conversationRecords(parseJsonl(snippet));
}

/** The `{role, content, kind?}` lines among records parsed from a snippet (as `parseJsonl` parses them). */
export function conversationRecords(records: readonly unknown[]): ConversationLine[] {
  const out: ConversationLine[] = [];
  for (const rec of records) {
    if (!rec || typeof rec !== "object") continue;
    const { role, content, kind } = rec as { role?: unknown; content?: unknown; kind?: unknown };
    if ((role === "user" || role === "assistant") && typeof content === "string") {
      out.push(kind === "question" || kind === "answer" ? { role, content, kind } : { role, content });
    }
  }
  return out;
}
