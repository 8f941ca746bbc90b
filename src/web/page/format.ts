/** Small pieces of presentation shared by the screens. */
import { AGENT_DISPLAY_NAMES } from "../../util/agent-names.ts";
import { h } from "./dom.ts";
import type { Summary } from "./api.ts";
import { markdown } from "./markdown.ts";
import { groupDigits } from "./dates.ts";

// the dates and times, in the forms `history list` prints (dates.ts)
export { dateTimeLabel, dayKey, dayLabel, groupDigits, timeLabel } from "./dates.ts";

export const TAGS = ["FEATURE", "BUGFIX", "REFACTORING", "TEST", "DOCS"] as const;

/** The time an entry is ordered and dated by. */
export function entryTime(e: Pick<Summary, "committedAt" | "capturedAt">): Date {
  return new Date(e.committedAt ?? e.capturedAt);
}

/** "1 commit", "2 commits". */
export function plural(n: number, one: string, many: string): string {
  return `${n} ${n === 1 ? one : many}`;
}

export function shortHash(hash: string): string {
  return hash.slice(0, 7);
}

/** An entry's tag; an untagged one (null: no summary, and the commit says nothing of its kind) says so. */
export function tagBadge(tag: string | null): HTMLElement {
  const known = tag !== null && (TAGS as readonly string[]).includes(tag) ? tag.toLowerCase() : "other";
  return h("span", { class: `tag tag-${known}` }, tag ?? "untagged");
}

export function agentLabel(agent: string): string {
  return AGENT_DISPLAY_NAMES[agent] ?? "Other agent";
}

/** An entry the agent has not yet summarised: written by the commit hook alone. */
export function isPending(e: Pick<Summary, "summaryStatus" | "intent">): boolean {
  return e.summaryStatus === "pending" || (e.summaryStatus === undefined && !e.intent.trim());
}

export function pendingBadge(): HTMLElement {
  return h("span", { class: "pending", title: "The agent has not yet written its summary of this commit" }, "not yet summarised");
}

/** One conversation line as stored: `{role, content}`, with its kind and time when the line carries them. */
export interface Turn {
  role: "user" | "assistant";
  content: string;
  /** e.g. the agent's question or the user's answer to it */
  kind?: string;
  /** when it was said (ms) */
  at?: number;
}

/** The `{role, content, kind?}` lines of stored JSONL; anything else is skipped. */
export function parseTurns(jsonl: string): Turn[] {
  const out: Turn[] = [];
  for (const line of jsonl.split("\n")) {
    if (!line.trim()) continue;
    try {
      const rec = JSON.parse(line) as { role?: unknown; content?: unknown; kind?: unknown; at?: unknown; timestamp?: unknown };
      if ((rec.role !== "user" && rec.role !== "assistant") || typeof rec.content !== "string") continue;
      const turn: Turn = { role: rec.role, content: rec.content };
      if (typeof rec.kind === "string") turn.kind = rec.kind;
      const when = typeof rec.at === "string" ? rec.at : typeof rec.timestamp === "string" ? rec.timestamp : null;
      const ms = when === null ? NaN : Date.parse(when);
      if (Number.isFinite(ms)) turn.at = ms;
      out.push(turn);
    } catch {
      // a broken line: skip it
    }
  }
  return out;
}

const FOLD_CHARS = 700;
const FOLD_LINES = 14;

/** One turn of a conversation, labelled by role; long turns are folded behind "show all". `md`: a reply in Markdown. */
export function turnView(label: string, kind: string, content: string, md = false): HTMLElement {
  const long = content.length > FOLD_CHARS || content.split("\n").length > FOLD_LINES;
  const body = md ? h("div", { class: "turn-body md" }, markdown(content)) : h("div", { class: "turn-body" }, content);
  if (!long) return h("div", { class: `turn turn-${kind}` }, h("div", { class: "turn-role" }, label), body);
  const preview = content.split("\n").slice(0, 6).join("\n").slice(0, 400);
  return h(
    "div",
    { class: `turn turn-${kind} folded` },
    h("div", { class: "turn-role" }, label),
    h("div", { class: "turn-body turn-preview" }, `${preview}…`),
    h("details", null, h("summary", null, `Show all (${groupDigits(content.length)} characters)`), body),
  );
}

/**
 * Labels for an entry's delta: the agent's question and the user's answer are the lines recorded as such when the
 * question was answered; every other line is labelled by its role.
 */
export function labelTurns(turns: Turn[]): { label: string; kind: string; content: string }[] {
  return turns.map((t) => {
    if (t.kind === "question") return { label: "Agent's question", kind: "question", content: t.content };
    if (t.kind === "answer") return { label: "Answer", kind: "answer", content: t.content };
    return t.role === "user" ? { label: "User", kind: "user", content: t.content } : { label: "Assistant", kind: "assistant", content: t.content };
  });
}
