/** Small pieces of presentation shared by the screens. */
import { AGENT_DISPLAY_NAMES } from "../../util/agent-names.ts";
import { h } from "./dom.ts";
import type { Summary } from "./api.ts";
import { markdown } from "./markdown.ts";

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

/*
 * Dates and times in the forms `history list` prints, in the browser's time zone: `YYYY-MM-DD`, a 24-hour `HH:MM`, and
 * the day headings' English weekday (the page is in English). No Intl formatter: the first one a fresh page creates
 * sets up ICU, which took 26–105 ms of the first render's main thread in headless Chromium on a 2-core machine.
 */
const WEEKDAYS = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"];
const pad2 = (n: number) => (n < 10 ? `0${n}` : String(n));

/** A local YYYY-MM-DD: the key of a day, and how a date is shown. */
export function dayKey(d: Date): string {
  return `${d.getFullYear()}-${pad2(d.getMonth() + 1)}-${pad2(d.getDate())}`;
}

/** A day heading: `Wed 2026-12-02`. */
export function dayLabel(d: Date): string {
  return `${WEEKDAYS[d.getDay()]} ${dayKey(d)}`;
}

/** `14:05`. */
export function timeLabel(d: Date): string {
  return `${pad2(d.getHours())}:${pad2(d.getMinutes())}`;
}

/** `2026-12-02 14:05`. */
export function dateTimeLabel(d: Date): string {
  return `${dayKey(d)} ${timeLabel(d)}`;
}

/** `12,345`: a count's digits grouped in threes (no Intl number format either). */
export function groupDigits(n: number): string {
  const digits = String(Math.trunc(Math.abs(n)));
  let out = "";
  for (let i = 0; i < digits.length; i++) {
    if (i > 0 && (digits.length - i) % 3 === 0) out += ",";
    out += digits[i];
  }
  return n < 0 ? `-${out}` : out;
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
