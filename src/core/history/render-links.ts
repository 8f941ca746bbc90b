/** Rendering a commit with no entry of its own through its link: "via squash 72d6dd0 of 3 agent commits". */
import type { Entry } from "../../store/entry.ts";
import type { Link } from "../../store/links.ts";
import { termSafeDeep } from "../../util/terminal.ts";
import { whyEntryLines, type WhyCommit } from "./render.ts";
import { day, paint, type Style } from "./style.ts";

const SHORT = 7;

/** A linked commit as the views show it: the link, its parts' entries, and (for a line range) the parts that wrote those lines. */
export interface LinkedView {
  link: Link;
  /** the parts' entries, oldest first */
  parts: Entry[];
  /** for `why file:lines`: the parts that wrote those lines ([]: none of them did; null: not asked) */
  forLines: Entry[] | null;
}

/** "via squash 72d6dd0 of 3 agent commits", "via rebase-merge copy of 1a2b3c4". */
export function viaText(commitHash: string, view: Pick<LinkedView, "link" | "parts">): string {
  const short = commitHash.slice(0, SHORT);
  const n = view.parts.length;
  if (view.link.method === "patch-id") {
    return n === 1
      ? `via copy ${short} of agent commit ${view.parts[0]!.commitHash.slice(0, SHORT)} (same patch: rebase-merge or cherry-pick)`
      : `via copy ${short} of ${n} agent commits with the same patch`;
  }
  const share = Math.round(view.link.coverage * 100);
  return `via squash ${short} of ${n} agent commit${n === 1 ? "" : "s"} (${share}% of its lines)`;
}

/** The `why` lines of a linked commit: its heading, then the parts that matter (those that wrote the lines asked about). */
export function renderVia(style: Style, rawCommit: WhyCommit, rawView: LinkedView): string[] {
  const c = termSafeDeep({ commitHash: rawCommit.commitHash, subject: rawCommit.subject, author: rawCommit.author, dateMs: rawCommit.dateMs });
  const view = termSafeDeep(rawView);
  const hash = paint(style, c.commitHash.slice(0, SHORT), "yellow");
  const out = [`${paint(style, "◆", "cyan")} ${hash}  ${c.subject}  ${paint(style, `(${c.author}, ${day(c.dateMs)}) · ${viaText(c.commitHash, view)}`, "dim")}`];
  if (view.forLines?.length === 0) {
    // a person's edit in the squash, or lines changed after the parts: no part's why is theirs
    out.push(`  ${paint(style, "these lines are in none of its recorded parts:", "dim")}`);
    for (const e of view.parts) out.push(`    ${paint(style, e.commitHash.slice(0, SHORT), "yellow")}  ${e.title}`);
    return out;
  }
  const shown = view.forLines ?? view.parts;
  if (view.forLines) out.push(`  ${paint(style, `these lines come from ${shown.length === 1 ? "this part" : `these ${shown.length} parts`}:`, "dim")}`);
  for (const e of shown) out.push(...whyEntryLines(style, e, paint(style, e.commitHash.slice(0, SHORT), "yellow"), c.author, "  "));
  return out;
}

/** The `history show` section of a linked commit: one line per part. */
export function renderLinkedShow(style: Style, commitHash: string, subject: string, rawView: LinkedView): string {
  const view = termSafeDeep(rawView);
  const out = [
    `${paint(style, `commit ${commitHash}`, "yellow")}`,
    `${paint(style, "Subject".padEnd(10), "dim")}${termSafeDeep(subject)}`,
    `${paint(style, "Entry".padEnd(10), "dim")}none of its own: ${viaText(commitHash, view)}`,
    "",
    paint(style, `Parts (${view.parts.length})`, "bold"),
  ];
  for (const e of view.parts) {
    const part = view.link.parts.find((p) => p.commitHash === e.commitHash);
    out.push(...whyEntryLines(style, e, paint(style, e.commitHash.slice(0, SHORT), "yellow"), `${part?.lines ?? 0} lines`, "  "));
    out.push(`    ${paint(style, `aiflare history show ${e.commitHash.slice(0, 10)}`, "dim")}`);
  }
  return `${out.join("\n")}\n`;
}
