/**
 * Matching a commit that has no entry of its own (a squash merge, a rebase-merge or cherry-pick copy, a forge's
 * web merge) to the entries whose changes it contains, from their fingerprints alone: the parts' commits may be
 * long gone (branch deleted, garbage-collected). A link is computed once: kept on the timeline branch and in the
 * index; a commit nothing matched is remembered in the index until a newer entry arrives.
 */
import type { Database } from "bun:sqlite";
import type { Entry } from "../../store/entry.ts";
import { cacheLink, cachedLink, linkCandidates } from "../../store/index/links.ts";
import { readLink, writeLink, type Link } from "../../store/links.ts";
import { ObjectStore, parseCommit } from "../../store/objects.ts";
import { execGit } from "../../util/git.ts";
import { isFullHash } from "../../util/ids.ts";
import { completeFingerprint, hashOfLine as hashLine, LineSketch, readChange, readFingerprint, type ChangeLines, type StoredLines } from "./fingerprint.ts";

/** Parts are looked for among entries of commits made this long before the landed commit. */
export const LINK_WINDOW_MS = 90 * 24 * 3600 * 1000;
/** A rebased copy is committed after its original; an original's clock may also run a little ahead. */
const AFTER_MS = 10 * 60 * 1000;
/** At most this many candidate entries are compared. */
const MAX_CANDIDATES = 400;
/** At most this many candidates without a stored fingerprint get one computed from their commit. */
const MAX_LAZY = 40;
/** A part must have written at least this share of its own fingerprinted lines into the landed commit. */
const MIN_SHARE = 0.3;

export interface LinkContext {
  db: Database;
  commonDir: string;
  /** where candidate parts come from (default: the index's entries; a teammate's clone adds the team cache's) */
  candidates?: typeof linkCandidates;
}

/** A candidate's change as the matcher sees it. */
interface Candidate {
  commitHash: string;
  ms: number;
  recordedMs: number;
  patchId: string;
  lines: StoredLines;
}

/** The one order of entries (SPEC §4), oldest first: commit time, then when recorded, then the hash. */
function oldestFirst(a: Candidate, b: Candidate): number {
  return a.ms - b.ms || a.recordedMs - b.recordedMs || (a.commitHash < b.commitHash ? -1 : a.commitHash > b.commitHash ? 1 : 0);
}

function toCandidate(commitHash: string, ms: number, entry: Pick<Entry, "fingerprint">, recordedMs = 0): Candidate | null {
  const fp = readFingerprint(entry.fingerprint);
  return fp ? { commitHash, ms, recordedMs, patchId: fp.patchId, lines: fp } : null;
}

/** The landed commit's first parent and committer time, or null when it is not in the object store. */
function commitHead(commonDir: string, hash: string): { parent: string | null; ms: number } | null {
  const obj = new ObjectStore(commonDir).tryRead(hash);
  if (obj?.type !== "commit") return null;
  const c = parseCommit(obj.content);
  return { parent: c.parents[0] ?? null, ms: c.committerTime * 1000 };
}

/** Commits of the landed commit's own history since `sinceMs`: their entries are not its parts. */
async function ancestorsSince(commonDir: string, parent: string | null, sinceMs: number): Promise<Set<string>> {
  if (!parent) return new Set();
  const r = await execGit(["--git-dir", commonDir, "rev-list", `--since=${Math.floor(sinceMs / 1000)}`, parent]);
  return new Set(new TextDecoder().decode(r.stdout).split("\n").filter(isFullHash));
}

/**
 * Which parts wrote which of `change`'s added lines: each line goes to the newest part that added it (a line
 * changed again within the branch belongs to the change that left it so). Returns line counts per part.
 */
function assignLines(change: ChangeLines, parts: Candidate[]): Map<string, number> {
  const counts = new Map<string, number>();
  const newestFirst = [...parts].sort((a, b) => oldestFirst(b, a));
  for (const [path, f] of change.files) {
    for (const h of f.add) {
      const owner = newestFirst.find((p) => p.lines.files.get(path)?.add.has(h));
      if (owner) counts.set(owner.commitHash, (counts.get(owner.commitHash) ?? 0) + 1);
    }
  }
  return counts;
}

/** How many of a candidate's lines (added and removed) the landed change has, and how many it has in all. */
function overlap(change: ChangeLines, c: Candidate): { hit: number; total: number } {
  let hit = 0;
  let total = 0;
  const count = (mine: Set<number> | undefined, theirs: LineSketch) => {
    total += theirs.size;
    // the landed change's hashes cut as the candidate's were: each of the candidate's values counted once
    const seen = new Set<number>();
    for (const h of mine ?? []) {
      const v = h >>> (24 - theirs.bits);
      if (!seen.has(v) && theirs.values.has(v)) hit++;
      seen.add(v);
    }
  };
  for (const [path, f] of c.lines.files) {
    const mine = change.files.get(path);
    count(mine?.add, f.add);
    count(mine?.del, f.del);
  }
  return { hit, total };
}

/** Counts the added lines of a change. */
function addedCount(change: ChangeLines): number {
  let n = 0;
  for (const f of change.files.values()) n += f.add.size;
  return n;
}

/**
 * Computes the link of `hash` from the index's entries (no cache): identical patches first, else the entries
 * whose lines it contains. Null when the commit is not here; a link with no parts when nothing matched.
 */
export async function computeLink(ctx: LinkContext, hash: string, now = new Date()): Promise<Link | null> {
  const head = commitHead(ctx.commonDir, hash);
  if (!head) return null;
  const change = await readChange(ctx.commonDir, hash);
  if (!change) return null;
  const base = { commitHash: hash, computedAt: now.toISOString() };
  const none: Link = { ...base, method: "none", parts: [], coverage: 0 };
  if (change.lines.files.size === 0 && !change.patchId) return none;
  const fromMs = head.ms - LINK_WINDOW_MS;
  const rows = (ctx.candidates ?? linkCandidates)(ctx.db, [...change.lines.files.keys()], fromMs, head.ms + AFTER_MS, hash, MAX_CANDIDATES);
  if (rows.length === 0) return none;
  const own = await ancestorsSince(ctx.commonDir, head.parent, fromMs - AFTER_MS);
  const candidates: Candidate[] = [];
  let lazy = 0;
  for (const row of rows) {
    if (own.has(row.commitHash)) continue;
    let entry: Pick<Entry, "fingerprint">;
    try {
      entry = JSON.parse(row.json) as Entry;
    } catch {
      continue;
    }
    if (!entry.fingerprint?.patchId && lazy < MAX_LAZY) {
      // an entry written before fingerprints, or without its patch id yet: its commit may still be here
      lazy++;
      entry = { fingerprint: await completeFingerprint(ctx.commonDir, row.commitHash, entry.fingerprint) };
    }
    const c = toCandidate(row.commitHash, row.ms, entry, row.recordedMs ?? 0);
    if (c) candidates.push(c);
  }
  const same = change.patchId ? candidates.filter((c) => c.patchId === change.patchId) : [];
  if (same.length > 0) {
    const n = addedCount(change.lines);
    const parts = same.sort(oldestFirst).map((c) => ({ commitHash: c.commitHash, method: "patch-id" as const, lines: n }));
    return { ...base, method: "patch-id", parts, coverage: 1 };
  }
  const accepted = candidates.filter((c) => {
    const { hit, total } = overlap(change.lines, c);
    return hit > 0 && hit >= MIN_SHARE * total;
  });
  const counts = assignLines(change.lines, accepted);
  const parts = accepted
    .filter((c) => (counts.get(c.commitHash) ?? 0) > 0)
    .sort(oldestFirst)
    .map((c) => ({ commitHash: c.commitHash, method: "lines" as const, lines: counts.get(c.commitHash) ?? 0 }));
  if (parts.length === 0) return none;
  const total = addedCount(change.lines);
  const explained = parts.reduce((n, p) => n + p.lines, 0);
  return { ...base, method: "squash", parts, coverage: total ? Math.round((explained / total) * 1000) / 1000 : 1 };
}

/**
 * The link of a commit without an entry: from the index's cache, else the timeline branch, else computed now
 * (and kept: a found link on the branch and in the index, a miss in the index). Null when nothing matched.
 */
export async function linkOf(ctx: LinkContext, hash: string): Promise<Link | null> {
  const cached = cachedLink(ctx.db, hash);
  if (cached === "none") return null;
  if (cached) return cached;
  const stored = readLink({ commonDir: ctx.commonDir }, hash);
  if (stored) {
    cacheLink(ctx.db, hash, stored);
    return stored.parts.length ? stored : null;
  }
  const link = await computeLink(ctx, hash);
  if (!link || link.parts.length === 0) {
    const head = commitHead(ctx.commonDir, hash);
    // a commit that is not here is asked about again whenever an entry arrives
    cacheLink(ctx.db, hash, null, head ? head.ms + AFTER_MS : Number.MAX_SAFE_INTEGER);
    return null;
  }
  try {
    await writeLink({ commonDir: ctx.commonDir }, link);
  } catch {
    // the branch could not be written (read-only): the index still has it
  }
  cacheLink(ctx.db, hash, link);
  return link;
}

/** A linked commit's parts with their entries, oldest first (parts whose entry is gone left out). */
export function linkParts(link: Link, entries: Map<string, Entry>): { part: Link["parts"][number]; entry: Entry }[] {
  return link.parts.flatMap((part) => {
    const entry = entries.get(part.commitHash);
    return entry ? [{ part, entry }] : [];
  });
}

/**
 * Which of a linked commit's parts wrote the given lines of `path`: each line's hash looked up in the parts'
 * added lines (a line several parts added: the part that wrote its neighbours, else the newest; a line too short
 * to say: see {@link shortLineOwner}). Parts in the order given; [] when none of them holds the lines.
 */
export function partsForLines(path: string, fileLines: string[], start: number, end: number, parts: Entry[]): Entry[] {
  const time = (e: Entry) => Date.parse(e.committedAt ?? e.capturedAt);
  const recorded = (e: Entry) => Date.parse(e.recordedAt ?? e.capturedAt) || 0;
  const newestFirst = [...parts].sort(
    (a, b) => time(b) - time(a) || recorded(b) - recorded(a) || (a.commitHash < b.commitHash ? 1 : a.commitHash > b.commitHash ? -1 : 0),
  );
  const sets = newestFirst.map((e) => {
    const fp = readFingerprint(e.fingerprint);
    return fp?.files.get(path)?.add ?? new LineSketch(24, new Set());
  });
  const found = new Set<string>();
  for (let line = start; line <= end; line++) {
    const i = lineOwner(fileLines, line - 1, sets);
    if (i >= 0) found.add(newestFirst[i]!.commitHash);
  }
  return parts.filter((e) => found.has(e.commitHash));
}

/** How far a line too short to fingerprint looks for a neighbour that is not, and a repeated line for its context. */
const NEIGHBOUR_REACH = 3;
/** How far a closing bracket looks up for the line that opened its block. */
const BLOCK_REACH = 400;

/** Which of `sets` (newest part first) wrote line `i` of the file; -1 when none did. */
function lineOwner(lines: string[], i: number, sets: LineSketch[]): number {
  const text = lines[i];
  if (text === undefined) return -1;
  const h = hashLine(text);
  if (h === null) return shortLineOwner(lines, i, sets);
  const holding: number[] = [];
  for (let k = 0; k < sets.length; k++) if (sets[k]!.has(h)) holding.push(k);
  if (holding.length <= 1) return holding[0] ?? -1;
  // several parts added this very line (a repeated statement): the one that wrote the lines around it, else the newest
  let best = holding[0]!;
  let most = -1;
  for (const k of holding) {
    let votes = 0;
    for (let j = i - NEIGHBOUR_REACH; j <= i + NEIGHBOUR_REACH; j++) {
      const near = j === i || lines[j] === undefined ? null : hashLine(lines[j]!);
      if (near !== null && sets[k]!.has(near)) votes++;
    }
    if (votes > most) [best, most] = [k, votes];
  }
  return best;
}

const indentOf = (line: string) => line.length - line.trimStart().length;

/**
 * The part that wrote a line too short to fingerprint (a brace, a comment mark). A closing one (a bracket, a comment's
 * end) goes with the part that opened its block (the nearest line above at its indentation), else with what it
 * closes (its nearest fingerprinted neighbour above first): a brace closing a person's block stays the person's.
 * Any other goes with its nearest fingerprinted neighbour below first: an opening mark starts what follows.
 * -1 when that line is no part's.
 */
function shortLineOwner(lines: string[], i: number, sets: LineSketch[]): number {
  const text = lines[i]!;
  const trimmed = text.trim();
  if (!trimmed) return -1;
  const owner = (h: number) => sets.findIndex((set) => set.has(h));
  const closing = /^([}\])]|\*\/)/.test(trimmed);
  if (closing && !trimmed.startsWith("*")) {
    const indent = indentOf(text);
    for (let j = i - 1; j >= 0 && j >= i - BLOCK_REACH; j--) {
      const above = lines[j]!;
      if (!above.trim() || indentOf(above) > indent) continue;
      const h = hashLine(above);
      const o = h === null ? -1 : owner(h);
      if (o >= 0) return o;
      break;
    }
  }
  for (let d = 1; d <= NEIGHBOUR_REACH; d++) {
    for (const j of closing ? [i - d, i + d] : [i + d, i - d]) {
      const near = lines[j];
      if (near === undefined) continue;
      const h = hashLine(near);
      if (h !== null) return owner(h);
    }
  }
  return -1;
}
