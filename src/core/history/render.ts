/** Text rendering of the history views. Pure functions: rows in, lines out. */
import { TAGS, UNTAGGED, type Entry } from "../../store/entry.ts";
import { conversationLines } from "../../util/jsonl.ts";
import { personName } from "../../util/person.ts";
import { holdsControls, termSafe, termSafeDeep } from "../../util/terminal.ts";
import type { EntryRow, SessionInfo } from "./query.ts";
import type { GitCommit } from "./why.ts";
import { renderVia, type LinkedView } from "./render-links.ts";
import {
  agentName,
  clock,
  day,
  indent,
  oneLine,
  padTo,
  paint,
  paintTag,
  PRINTABLE_ASCII,
  timeRange,
  truncate,
  width,
  type Style,
} from "./style.ts";

/** How an entry whose summary the agent never wrote is marked. */
export const PENDING_MARK = "(summary pending)";

/** True when no one wrote the entry's why: the agent's summary is pending, or it was imported without one. */
export function lacksWhy(e: { summaryStatus?: string | null; intent?: string }): boolean {
  return e.summaryStatus === "pending" || e.summaryStatus === "imported" || (e.intent !== undefined && !e.intent.trim());
}

/** The command that records the why of `commitHash` (its tag filled in when the commit says it). */
export function captureCommand(e: { commitHash: string; tag: string | null }): string {
  const tag = e.tag && e.tag !== UNTAGGED ? e.tag : `<${TAGS.join("|")}>`;
  return `aiflare capture --commit-hash ${e.commitHash} --tag ${tag} --intent "<why: problem, solution, effect>"`;
}

/** The time an entry is dated by: its commit's, else when it was written. */
function entryTime(entry: Entry): { ms: number; text: string } {
  const text = entry.committedAt ?? entry.capturedAt;
  return { ms: Date.parse(text), text };
}

/** User prompts shown under one entry before "and N more". */
const MAX_PROMPTS = 3;
const MAX_TITLE = 60;
const SHORT = 7;

/** How one session block is laid out: its entries in order, group members under their root. */
interface Block {
  info: SessionInfo;
  agent: string;
  author?: string;
  lines: { row: EntryRow; member: boolean }[];
}

/** Groups newest-first rows into session blocks (newest session first, entries oldest first inside). */
export function toBlocks(rows: EntryRow[], sessions: Map<string, SessionInfo>): Block[] {
  const bySession = new Map<string, EntryRow[]>();
  for (const r of rows) {
    const list = bySession.get(r.sessionId);
    if (list) list.push(r);
    else bySession.set(r.sessionId, [r]);
  }
  const blocks: Block[] = [];
  for (const [id, list] of bySession) {
    const ordered = [...list].reverse();
    const shown = new Set(ordered.map((r) => r.commitHash));
    const children = new Map<string, EntryRow[]>();
    const top: EntryRow[] = [];
    for (const r of ordered) {
      if (r.groupRoot && r.groupRoot !== r.commitHash && shown.has(r.groupRoot)) {
        const c = children.get(r.groupRoot);
        if (c) c.push(r);
        else children.set(r.groupRoot, [r]);
      } else top.push(r);
    }
    const lines: Block["lines"] = [];
    for (const r of top) {
      lines.push({ row: r, member: false });
      for (const c of children.get(r.commitHash) ?? []) lines.push({ row: c, member: true });
    }
    const info = sessions.get(id) ?? {
      sessionId: id,
      firstRequest: null,
      fromMs: ordered[0]!.capturedMs,
      toMs: ordered[ordered.length - 1]!.capturedMs,
      entryCount: ordered.length,
    };
    blocks.push({ info, agent: list[0]!.agentType, author: list[0]!.author, lines });
  }
  return blocks;
}

function quote(text: string, cols: number): string {
  const room = Math.max(10, cols - 2);
  // Only the start can be shown: skip collapsing whitespace in the rest of a long prompt.
  const keep = cols * 4 + 16;
  // Whitespace collapses alike in any prefix of the text, so when a short prefix already gives more than the line's
  // room in plain ASCII, the line is that prefix cut (as truncate would cut it): most prompts, done on a sixth of it.
  const head = oneLine(text.slice(0, Math.min(keep, room + 32)));
  if (head.length > room && PRINTABLE_ASCII.test(head.slice(0, room + 1))) return `"${head.slice(0, room - 1)}…"`;
  const line = text.length > keep ? `${oneLine(text.slice(0, keep))}…` : oneLine(text);
  return `"${truncate(line, room)}"`;
}

function promptLines(style: Style, prompts: string[], pad: string): string[] {
  const out: string[] = [];
  const cols = style.width - width(pad) - 3;
  for (const p of prompts.slice(0, MAX_PROMPTS)) out.push(`${pad}💬 ${quote(p, cols)}`);
  if (prompts.length > MAX_PROMPTS) out.push(`${pad}${paint(style, `   … and ${prompts.length - MAX_PROMPTS} more`, "dim")}`);
  return out;
}

/** The `history list` view. */
export function renderList(rawRows: EntryRow[], rawSessions: Map<string, SessionInfo>, style: Style): string {
  // everything shown came from outside (prompts, titles, branch names): no control sequence reaches the terminal
  // (rows are copied clean only when some string needs it: most never do, and copying them is a fifth of the view)
  const rows = holdsControls(rawRows) ? termSafeDeep(rawRows) : rawRows;
  const sessions = holdsControls([...rawSessions]) ? termSafeDeep(rawSessions) : rawSessions;
  const blocks = toBlocks(rows, sessions);
  const tagWidth = Math.max(0, ...rows.map((r) => r.tag.length));
  // Title column: wide enough for the longest title, but leave room for the time on a narrow terminal.
  const room = style.width - (4 + SHORT + 2 + tagWidth + 2) - 4 - 11;
  const titleCap = Math.max(20, Math.min(MAX_TITLE, room));
  const titleWidth = Math.min(titleCap, Math.max(0, ...rows.map((r) => width(r.title))));
  const out: string[] = [];
  for (const block of blocks) {
    const { info } = block;
    const oneDay = day(info.fromMs) === day(info.toMs);
    const id = `Session ${info.sessionId.slice(0, 8)}`;
    const tail = `${agentName(block.agent)} · ${timeRange(info.fromMs, info.toMs)}`;
    // The first request gets whatever the rest of the heading leaves of the line (within limits).
    const room = Math.max(20, Math.min(60, style.width - width(id) - width(tail) - 6));
    const heading = [
      `${paint(style, "Session", "bold")} ${paint(style, info.sessionId.slice(0, 8), "yellow")}`,
      info.firstRequest ? paint(style, quote(info.firstRequest, room), "bold") : null,
      agentName(block.agent),
      block.author ? personName(block.author) : null,
      paint(style, timeRange(info.fromMs, info.toMs), "dim"),
    ].filter((x): x is string => x !== null);
    if (out.length) out.push("");
    out.push(heading.join(" · "));
    for (const { row, member } of block.lines) {
      const lead = member ? `  ${paint(style, "└", "dim")} ` : `${paint(style, "●", "cyan")} `;
      const title = padTo(truncate(row.title, titleWidth), titleWidth + (member ? 0 : 2));
      const when = oneDay ? clock(row.capturedMs) : `${day(row.capturedMs)} ${clock(row.capturedMs)}`;
      const pending = row.pending ? `  ${paint(style, PENDING_MARK, "red")}` : "";
      out.push(
        `${lead}${paint(style, row.commitHash.slice(0, SHORT), "yellow")}  ${paintTag(style, row.tag, tagWidth)}  ${title}    ${paint(style, when, "dim")}${pending}`,
      );
      out.push(...promptLines(style, row.prompts, "     "));
    }
  }
  const missing = rows.filter((r) => r.lacksWhy);
  if (missing.length) {
    const n = missing.length;
    out.push(
      "",
      `${n === 1 ? "1 entry shown has" : `${n} entries shown have`} no why recorded; record ${n === 1 ? "it" : "the newest"}: ${captureCommand(missing[0]!)}`,
    );
  }
  return `${out.join("\n")}\n`;
}

/** Where text lines wrap: the terminal's width on a terminal, nowhere when piped. */
const wrapWidth = (style: Style) => (style.wrap ? style.width : undefined);

function section(style: Style, title: string, body: string, empty: string): string[] {
  const text = body.trim() ? indent(body, "    ", wrapWidth(style)) : `    ${paint(style, empty, "dim")}`;
  return ["", paint(style, title, "bold"), text];
}

/** The `history show` view: the whole entry and its conversation delta. */
export function renderShow(
  rawEntry: Entry,
  rawExtra: {
    group: { commitHash: string; title: string }[];
    conversation: { role: string; content: string; kind?: string }[];
    firstRequest: string | null;
  },
  style: Style,
): string {
  const entry = termSafeDeep(rawEntry);
  const extra = termSafeDeep(rawExtra);
  const { ms, text: when } = entryTime(entry);
  const label = (s: string) => paint(style, s.padEnd(10), "dim");
  const out: string[] = [
    `${paint(style, `commit ${entry.commitHash}`, "yellow")}`,
    `${label("Title")}${paint(style, entry.title, "bold")}`,
    `${label("Tag")}${paintTag(style, entry.tag)}`,
    `${label("Branch")}${entry.branch}`,
    `${label("Session")}${entry.claudeSessionId} · ${agentName(entry.agentType)}${entry.model ? ` (${entry.model})` : ""}`,
    ...(entry.author ? [`${label("Author")}${entry.author}`] : []),
    ...(entry.continuedFrom ? [`${label("Continues")}session ${entry.continuedFrom} (before /clear)`] : []),
    `${label(entry.committedAt ? "Committed" : "Captured")}${Number.isFinite(ms) ? `${day(ms)} ${clock(ms)}` : when}`,
  ];
  if (lacksWhy(entry)) {
    const why =
      entry.summaryStatus === "imported"
        ? "imported from a past session: no why was written"
        : entry.summaryStatus === "pending"
          ? "pending: the agent has not written why yet"
          : "no why was written";
    out.push(`${label("Summary")}${paint(style, why, "red")}`, `${label("")}record it: ${captureCommand(entry)}`);
  }
  if (extra.firstRequest) out.push(`${label("Request")}${quote(extra.firstRequest, style.width - 12)}`);
  if (extra.group.length > 1) {
    out.push(`${label("Group")}${extra.group.length} entries`);
    extra.group.forEach((m, i) => {
      const mark = i === 0 ? "●" : "└";
      const here = m.commitHash === entry.commitHash ? paint(style, "  ← this entry", "dim") : "";
      out.push(`${" ".repeat(10)}${mark} ${paint(style, m.commitHash.slice(0, SHORT), "yellow")}  ${m.title}${here}`);
    });
  } else {
    out.push(`${label("Group")}none (a request answered by this commit alone)`);
  }
  if (entry.continuation) out.push(`${label("")}follows an answer to the agent's question`);
  out.push(...section(style, "Intent", entry.intent, "(not written)"));
  out.push(...section(style, "Alternatives", entry.alternatives, "(none discussed)"));
  out.push(...section(style, "Diff summary", entry.diffSummary, "(not written)"));
  out.push(...section(style, `Changed files (${entry.changedFiles.length})`, entry.changedFiles.join("\n"), "(none)"));
  out.push("", paint(style, "Conversation", "bold"));
  if (extra.conversation.length === 0) out.push(`    ${paint(style, "(no conversation since the previous commit)", "dim")}`);
  for (const turn of extra.conversation) {
    out.push(`  ${paint(style, turnLabel(turn), "bold", turn.role === "user" ? "cyan" : "magenta")}`);
    out.push(indent(turn.content, "    ", wrapWidth(style)));
  }
  return `${out.join("\n")}\n`;
}

/** A conversation turn's label: the agent's question and the answer as recorded, else the role. */
function turnLabel(turn: { role: string; kind?: string }): string {
  if (turn.kind === "question") return "Agent's question";
  if (turn.kind === "answer") return "Answer";
  return turn.role === "user" ? "User" : "Assistant";
}

/** One commit in the `why` view, with its entry when it has one. */
export interface WhyCommit extends GitCommit {
  entry: Entry | null;
  /** the entry is a teammate's, from the team server or its cache (`aiflare pull`), not this clone's capture */
  team?: boolean;
  /** for a commit with no entry of its own that contains recorded changes (squash, rebase-merge): its parts */
  via?: LinkedView;
}

/** The `why` view: each commit's entry (title, intent, alternatives, prompts), or its plain commit line. */
/** `total` null: git was asked only for the newest commits, so how many there are in all is not known. */
export function renderWhy(rawTarget: string, rawCommits: WhyCommit[], total: number | null, style: Style): string {
  const target = termSafe(rawTarget);
  const commits = termSafeDeep(rawCommits);
  const count =
    total === null
      ? `${commits.length} most recent commits (--limit 0 for all)`
      : commits.length < total
        ? `${commits.length} most recent of ${total} commits`
        : `${total} commit${total === 1 ? "" : "s"}`;
  const out: string[] = [`${paint(style, target, "bold")} · ${count}`];
  for (const c of commits) {
    out.push("");
    const hash = paint(style, c.commitHash.slice(0, SHORT), "yellow");
    if (!c.entry && c.via) {
      out.push(...renderVia(style, c, c.via));
      continue;
    }
    if (!c.entry) {
      out.push(
        `${paint(style, "○", "dim")} ${hash}  ${c.subject}  ${paint(style, `(${c.author}, ${day(c.dateMs)}) · no aiflare entry`, "dim")}`,
      );
      continue;
    }
    out.push(...whyEntryLines(style, c.entry, hash, c.author, "", c.team));
  }
  return `${out.join("\n")}\n`;
}

/** One entry in the `why` view: its heading line, when and by whom, intent, alternatives and prompts. */
export function whyEntryLines(style: Style, e: Entry, hash: string, author: string, pad: string, team = false): string[] {
  const out: string[] = [];
  const { ms, text: when } = entryTime(e);
  const pending = e.summaryStatus === "pending" ? `  ${paint(style, PENDING_MARK, "red")}` : "";
  out.push(`${pad}${paint(style, "●", "cyan")} ${hash}  ${paintTag(style, e.tag)}  ${paint(style, e.title, "bold")}${pending}`);
  out.push(
    `${pad}  ${paint(style, `${Number.isFinite(ms) ? `${day(ms)} ${clock(ms)}` : when} · Session ${e.claudeSessionId.slice(0, 8)} · ${agentName(e.agentType)} · ${author}${team ? " · from the team server" : ""}`, "dim")}`,
  );
  if (e.intent.trim()) out.push(`${pad}  ${paint(style, "Intent", "bold")}`, indent(e.intent, `${pad}    `, wrapWidth(style)));
  if (lacksWhy(e) && !team) out.push(`${pad}  ${paint(style, "No why recorded; record it:", "red")} ${captureCommand(e)}`);
  if (e.alternatives.trim()) out.push(`${pad}  ${paint(style, "Alternatives", "bold")}`, indent(e.alternatives, `${pad}    `, wrapWidth(style)));
  out.push(...promptLines(style, promptsOf(e), `${pad}  `));
  return out;
}

function promptsOf(entry: Entry): string[] {
  return conversationLines(entry.conversationSnippet)
    .filter((l) => l.role === "user")
    // the snippet is JSON text: its escaped control characters appear only once it is parsed
    .map((l) => termSafe(l.content));
}
