/**
 * `aiflare export --format agent-trace`: one Agent Trace v0.1.0 record per commit of a range that has an entry (this
 * clone's or the team's), naming the lines the commit added as the agent's, with the model that wrote them.
 */
import { finishQueued } from "../capture/queue.ts";
import { createHash } from "node:crypto";
import { AiflareError } from "../../errors.ts";
import type { Entry } from "../../store/entry.ts";
import { withIndex } from "../../store/index-db.ts";
import { execGit } from "../../util/git.ts";
import { VERSION } from "../../version.ts";
import { knownEntries, knownLinks, partOfLine } from "../history/known.ts";
import { findRepo } from "../repo.ts";

/** The Agent Trace version emitted (the specification's README form, three numbers). */
export const AGENT_TRACE_VERSION = "0.1.0";

export interface TraceRange {
  start_line: number;
  end_line: number;
}

/** A record as Agent Trace v0.1.0 shapes it. */
export interface TraceRecord {
  version: string;
  id: string;
  timestamp: string;
  vcs: { type: "git"; revision: string };
  tool: { name: string; version: string };
  files: { path: string; conversations: { contributor: { type: "ai"; model_id?: string }; ranges: TraceRange[] }[] }[];
  metadata: Record<string, unknown>;
}

/** A stable record id for a commit: the same export twice gives the same ids (a name-based UUID, version 5 form). */
export function recordId(commitHash: string): string {
  const b = createHash("sha1").update(`aiflare agent-trace ${commitHash}`).digest();
  b[6] = (b[6]! & 0x0f) | 0x50;
  b[8] = (b[8]! & 0x3f) | 0x80;
  const h = b.subarray(0, 16).toString("hex");
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}

/** The model as models.dev names it (`provider/model`) where the provider is plain from the name. */
export function modelId(model: string | undefined): string | undefined {
  if (!model) return undefined;
  const m = model.trim().slice(0, 250);
  if (m.includes("/")) return m;
  if (/^claude/i.test(m)) return `anthropic/${m}`;
  if (/^(gpt|o\d|codex)/i.test(m)) return `openai/${m}`;
  if (/^gemini/i.test(m)) return `google/${m}`;
  return m;
}

/** The lines each file gained in a commit (against its first parent), as ranges in the commit's own version. */
export function addedRanges(patch: string): Map<string, TraceRange[]> {
  const out = new Map<string, TraceRange[]>();
  let ranges: TraceRange[] | null = null;
  for (const line of patch.split("\n")) {
    if (line.startsWith("+++ ")) {
      const path = line.slice(4);
      ranges = path === "/dev/null" ? null : [];
      if (ranges) out.set(path.startsWith("b/") ? path.slice(2) : path, ranges);
      continue;
    }
    const hunk = /^@@ -\d+(?:,\d+)? \+(\d+)(?:,(\d+))? @@/.exec(line);
    if (hunk && ranges) {
      const start = Number(hunk[1]);
      const count = hunk[2] === undefined ? 1 : Number(hunk[2]);
      if (count > 0) ranges.push({ start_line: start, end_line: start + count - 1 });
    }
  }
  for (const [path, r] of out) if (r.length === 0) out.delete(path);
  return out;
}

/** One commit's record from its entry and its patch. */
export function traceRecord(entry: Entry, patch: string): TraceRecord {
  const model = modelId(entry.model);
  const when = Date.parse(entry.committedAt ?? entry.capturedAt);
  return {
    version: AGENT_TRACE_VERSION,
    id: recordId(entry.commitHash),
    timestamp: new Date(Number.isFinite(when) ? when : 0).toISOString(),
    vcs: { type: "git", revision: entry.commitHash },
    tool: { name: "aiflare", version: VERSION },
    files: [...addedRanges(patch)].map(([path, ranges]) => ({
      path,
      conversations: [{ contributor: { type: "ai" as const, ...(model ? { model_id: model } : {}) }, ranges }],
    })),
    metadata: {
      aiflare: {
        title: entry.title,
        intent: entry.intent,
        tag: entry.tag,
        agentType: entry.agentType,
        sessionId: entry.claudeSessionId,
        groupRootId: entry.groupRootId,
      },
    },
  };
}

/**
 * A squash or rebase-merge commit's record: each added line goes to the part that wrote it (one conversation per
 * part, with that part's model); lines no part wrote are left out. Null when no line is any part's.
 */
export function linkedTraceRecord(commitHash: string, committedAt: string, parts: Entry[], patch: string, fileAt: (path: string) => string[] | null, ownerOf: (path: string, lines: string[], line: number) => Entry | null): TraceRecord | null {
  const files: TraceRecord["files"] = [];
  for (const [path, ranges] of addedRanges(patch)) {
    const lines = fileAt(path);
    if (!lines) continue;
    const byPart = new Map<string, TraceRange[]>();
    for (const r of ranges) {
      for (let line = r.start_line; line <= r.end_line; line++) {
        const part = ownerOf(path, lines, line);
        if (!part) continue;
        const list = byPart.get(part.commitHash) ?? [];
        const last = list.at(-1);
        if (last && last.end_line === line - 1) last.end_line = line;
        else list.push({ start_line: line, end_line: line });
        byPart.set(part.commitHash, list);
      }
    }
    const conversations = parts.flatMap((p) => {
      const rs = byPart.get(p.commitHash);
      const model = modelId(p.model);
      return rs ? [{ contributor: { type: "ai" as const, ...(model ? { model_id: model } : {}) }, ranges: rs }] : [];
    });
    if (conversations.length) files.push({ path, conversations });
  }
  if (files.length === 0) return null;
  return {
    version: AGENT_TRACE_VERSION,
    id: recordId(commitHash),
    timestamp: committedAt,
    vcs: { type: "git", revision: commitHash },
    tool: { name: "aiflare", version: VERSION },
    files,
    metadata: { aiflare: { parts: parts.map((p) => ({ commitHash: p.commitHash, title: p.title, intent: p.intent, tag: p.tag, sessionId: p.claudeSessionId })) } },
  };
}

/** Writes the range's records as JSON Lines, oldest commit first; returns how many were written. */
export async function exportAgentTrace(cwd: string, range: string | undefined, write: (text: string) => Promise<void>): Promise<number> {
  const repo = findRepo(cwd);
  if (!repo) throw new AiflareError("NOT_A_REPO", `${cwd} is not inside a git repository. Run aiflare from your project.`);
  await finishQueued(repo.commonDir);
  const spec = range?.trim() || "HEAD";
  if (spec.startsWith("-")) throw new AiflareError("INVALID_ARGUMENT", `${spec}: give a revision range such as main..feature or HEAD~10..HEAD`);
  const list = await execGit(["rev-list", "--reverse", spec, "--"], { cwd });
  if (list.code !== 0) throw new AiflareError("NOT_FOUND", `${spec}: not a revision range git knows (${list.stderr.trim().split("\n")[0] ?? ""}).`);
  const hashes = new TextDecoder().decode(list.stdout).split("\n").filter((h) => /^[0-9a-f]{40}$/.test(h));
  // a true merge's lines are its parents' own: only squash and rebase-merge commits are read through their parts
  const merges = new Set(new TextDecoder().decode((await execGit(["rev-list", "--merges", spec, "--"], { cwd })).stdout).split("\n"));
  const { entries, linked } = await withIndex(repo.commonDir, async (db) => {
    const entries = await knownEntries(db, repo, hashes);
    return { entries, linked: await knownLinks(db, repo, hashes.filter((h) => !entries.has(h) && !merges.has(h))) };
  });
  const text = (r: { stdout: Uint8Array }) => new TextDecoder().decode(r.stdout);
  let n = 0;
  for (const h of hashes) {
    const known = entries.get(h);
    const view = linked.get(h);
    if (!known && !view) continue;
    const show = await execGit(["-c", "core.quotePath=false", "show", "--first-parent", "-m", "-U0", "--format=%cI%n", "--no-color", "--no-ext-diff", "-M", h, "--"], { cwd });
    if (show.code !== 0) continue;
    const [date = "", ...rest] = text(show).split("\n");
    const patch = rest.join("\n");
    let record: TraceRecord | null;
    if (known) record = traceRecord(known.entry, patch);
    else {
      const files = new Map<string, string[] | null>();
      for (const path of addedRanges(patch).keys()) {
        const blob = await execGit(["show", `${h}:${path}`], { cwd });
        files.set(path, blob.code === 0 ? text(blob).split("\n") : null);
      }
      const when = Date.parse(date);
      record = linkedTraceRecord(h, new Date(Number.isFinite(when) ? when : 0).toISOString(), view!.parts, patch, (p) => files.get(p) ?? null, (p, lines, line) => partOfLine(view!, p, lines, line));
    }
    if (!record) continue;
    await write(`${JSON.stringify(record)}\n`);
    n++;
  }
  return n;
}
