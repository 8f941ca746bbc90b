/** Small pieces of presentation shared by the screens. */
import { h } from "./dom.ts";
import type { Summary } from "./api.ts";

export const TAGS = ["FEATURE", "BUGFIX", "REFACTORING", "TEST", "DOCS"] as const;

/** The time an entry is ordered and dated by. */
export function entryTime(e: Pick<Summary, "committedAt" | "capturedAt">): Date {
  return new Date(e.committedAt ?? e.capturedAt);
}

export function shortHash(hash: string): string {
  return hash.slice(0, 7);
}

// Formatters are costly to create; the timeline formats hundreds of times per page.
const DAY_FMT = new Intl.DateTimeFormat(undefined, { weekday: "short", year: "numeric", month: "short", day: "numeric" });
const TIME_FMT = new Intl.DateTimeFormat(undefined, { hour: "2-digit", minute: "2-digit" });
const DATE_FMT = new Intl.DateTimeFormat(undefined, { year: "numeric", month: "short", day: "numeric" });

export function dayLabel(d: Date): string {
  return DAY_FMT.format(d);
}

export function timeLabel(d: Date): string {
  return TIME_FMT.format(d);
}

export function dateTimeLabel(d: Date): string {
  return `${DATE_FMT.format(d)} ${TIME_FMT.format(d)}`;
}

/** A local YYYY-MM-DD key. */
export function dayKey(d: Date): string {
  return `${d.getFullYear()}-${String(d.getMonth() + 1).padStart(2, "0")}-${String(d.getDate()).padStart(2, "0")}`;
}

/** An entry's tag; an untagged one (null: no summary, and the commit says nothing of its kind) says so. */
export function tagBadge(tag: string | null): HTMLElement {
  const known = tag !== null && (TAGS as readonly string[]).includes(tag) ? tag.toLowerCase() : "other";
  return h("span", { class: `tag tag-${known}` }, tag ?? "untagged");
}

export function agentLabel(agent: string): string {
  return ({ CLAUDE_CODE: "Claude Code", CODEX: "Codex", GEMINI_CLI: "Gemini CLI" } as Record<string, string>)[agent] ?? "Other agent";
}

/** An entry the agent has not yet summarised: written by the commit hook alone. */
export function isPending(e: Pick<Summary, "summaryStatus" | "intent">): boolean {
  return e.summaryStatus === "pending" || (e.summaryStatus === undefined && !e.intent.trim());
}

export function pendingBadge(): HTMLElement {
  return h("span", { class: "pending", title: "The agent has not yet written its summary of this commit" }, "not yet summarised");
}

/** One conversation line as stored: `{role, content}`. */
export interface Turn {
  role: "user" | "assistant";
  content: string;
}

/** The `{role, content}` lines of stored JSONL; anything else is skipped. */
export function parseTurns(jsonl: string): Turn[] {
  const out: Turn[] = [];
  for (const line of jsonl.split("\n")) {
    if (!line.trim()) continue;
    try {
      const rec = JSON.parse(line) as { role?: unknown; content?: unknown };
      if ((rec.role === "user" || rec.role === "assistant") && typeof rec.content === "string") out.push({ role: rec.role, content: rec.content });
    } catch {
      // a broken line: skip it
    }
  }
  return out;
}

const FOLD_CHARS = 700;
const FOLD_LINES = 14;

/** One turn of a conversation, labelled by role; long turns are folded behind "show all". */
export function turnView(label: string, kind: string, content: string): HTMLElement {
  const long = content.length > FOLD_CHARS || content.split("\n").length > FOLD_LINES;
  const body = h("div", { class: "turn-body" }, content);
  if (!long) return h("div", { class: `turn turn-${kind}` }, h("div", { class: "turn-role" }, label), body);
  const preview = content.split("\n").slice(0, 6).join("\n").slice(0, 400);
  return h(
    "div",
    { class: `turn turn-${kind} folded` },
    h("div", { class: "turn-role" }, label),
    h("div", { class: "turn-body turn-preview" }, `${preview}…`),
    h("details", null, h("summary", null, `Show all (${content.length.toLocaleString()} characters)`), body),
  );
}

/**
 * Labels for an entry's delta: the agent's question and the user's answer (before a continuation commit) are told
 * apart from ordinary requests and replies.
 */
export function labelTurns(turns: Turn[], continuation: boolean): { label: string; kind: string; content: string }[] {
  let qa: "none" | "answering" | "done" = continuation ? "none" : "done";
  return turns.map((t, i) => {
    if (qa === "none" && t.role === "assistant" && turns[i + 1]?.role === "user") {
      qa = "answering";
      return { label: "Agent's question", kind: "question", content: t.content };
    }
    if (qa === "answering" && t.role === "user") return { label: "Answer", kind: "answer", content: t.content };
    if (qa === "answering") qa = "done";
    return t.role === "user" ? { label: "User", kind: "user", content: t.content } : { label: "Assistant", kind: "assistant", content: t.content };
  });
}
