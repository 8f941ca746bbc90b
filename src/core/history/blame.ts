/** `why <file> --blame`: every line of a file with the commit that last changed it and, where an agent wrote it, the entry. */
import type { Entry } from "../../store/entry.ts";
import { execGit } from "../../util/git.ts";
import { conversationLines } from "../../util/jsonl.ts";
import { termSafe } from "../../util/terminal.ts";
import { AiflareError } from "../../errors.ts";
import { paint, paintTag, type Style } from "./style.ts";

/** One line of the file as git blame sees it. */
export interface BlameLine {
  line: number;
  commitHash: string;
  text: string;
  /** for a line of a squash or rebase-merge commit: the part (a commit with an entry) that wrote it */
  via?: string;
}

/** What blame says of a commit, and the entry behind it when there is one. */
export interface BlameCommit {
  commitHash: string;
  subject: string;
  author: string;
  /** null for lines not committed yet */
  dateMs: number | null;
  entry: Entry | null;
  /** the entry is a teammate's (team server or its cache) */
  team?: boolean;
}

const UNCOMMITTED = "0".repeat(40);

/** Runs `git blame --porcelain` on the file as it is in the working tree. */
export async function blameFile(cwd: string, file: string): Promise<{ lines: BlameLine[]; commits: Map<string, Omit<BlameCommit, "entry">> }> {
  const r = await execGit(["blame", "--porcelain", "--", file], { cwd });
  if (r.code !== 0) {
    throw new AiflareError("NOT_FOUND", `${file}: git cannot blame it (${r.stderr.trim().split("\n")[0] ?? "unknown error"}). Name a file git tracks.`);
  }
  const lines: BlameLine[] = [];
  const commits = new Map<string, Omit<BlameCommit, "entry">>();
  let current: Omit<BlameCommit, "entry"> | null = null;
  let lineNo = 0;
  for (const raw of new TextDecoder().decode(r.stdout).split("\n")) {
    const head = /^([0-9a-f]{40}) \d+ (\d+)/.exec(raw);
    if (head) {
      const hash = head[1]!;
      lineNo = Number(head[2]);
      current = commits.get(hash) ?? { commitHash: hash, subject: "", author: "", dateMs: hash === UNCOMMITTED ? null : 0 };
      commits.set(hash, current);
      continue;
    }
    if (!current) continue;
    if (raw.startsWith("\t")) lines.push({ line: lineNo, commitHash: current.commitHash, text: raw.slice(1) });
    else if (raw.startsWith("author ")) current.author = raw.slice(7);
    else if (raw.startsWith("summary ")) current.subject = raw.slice(8);
    else if (raw.startsWith("committer-time ") && current.dateMs !== null) current.dateMs = Number(raw.slice(15)) * 1000;
  }
  return { lines, commits };
}

function firstRequest(e: Entry): string | null {
  for (const l of conversationLines(e.conversationSnippet)) if (l.role === "user" && l.content.trim()) return l.content.trim();
  return null;
}

const oneLine = (s: string, max: number) => {
  const flat = s.replace(/\s+/g, " ").trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
};

/**
 * The file's lines, each with its commit's short hash and a mark naming its entry (`[1]`, `[2]` … in order of first
 * appearance; `·` where no agent wrote it), then what each mark means: title, tag, the request it answered, intent.
 */
export function renderBlame(file: string, lines: BlameLine[], commits: Map<string, BlameCommit>, style: Style): string {
  const marks = new Map<string, number>();
  const owner = (l: BlameLine) => l.via ?? l.commitHash;
  for (const l of lines) if (commits.get(owner(l))?.entry && !marks.has(owner(l))) marks.set(owner(l), marks.size + 1);
  const agentLines = lines.filter((l) => marks.has(owner(l))).length;
  const out: string[] = [`${paint(style, termSafe(file), "bold")} · ${lines.length} lines, ${agentLines} written in ${marks.size} recorded ${marks.size === 1 ? "request" : "requests"}`, ""];
  const width = String(lines.at(-1)?.line ?? 1).length;
  const markWidth = String(marks.size).length + 2;
  for (const l of lines) {
    const n = marks.get(owner(l));
    const mark = n === undefined ? "·".padEnd(markWidth) : `[${n}]`.padEnd(markWidth);
    const hash = l.commitHash === UNCOMMITTED ? "uncommit" : l.commitHash.slice(0, 8);
    out.push(`${paint(style, String(l.line).padStart(width), "dim")} ${paint(style, hash, "yellow")} ${paint(style, mark, n === undefined ? "dim" : "cyan")} ${termSafe(l.text)}`);
  }
  for (const [hash, n] of marks) {
    const c = commits.get(hash)!;
    const e = c.entry!;
    out.push("");
    out.push(`${paint(style, `[${n}]`, "cyan")} ${paint(style, hash.slice(0, 8), "yellow")}  ${paintTag(style, e.tag)}  ${paint(style, termSafe(e.title), "bold")}${c.team ? paint(style, " · from the team server", "dim") : ""}`);
    const request = firstRequest(e);
    if (request) out.push(`    ${paint(style, "Asked:", "dim")} ${termSafe(oneLine(request, 160))}`);
    if (e.intent.trim()) out.push(`    ${paint(style, "Intent:", "dim")} ${termSafe(oneLine(e.intent, 200))}`);
  }
  return `${out.join("\n")}\n`;
}
