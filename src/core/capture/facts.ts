import { diffTreeBlobs, ObjectStore, parseCommit, subjectOf, type BlobChange } from "../../store/objects.ts";
import type { Tag } from "../../store/entry.ts";
import { gitSync } from "../../util/git.ts";

/** What a commit's own object says of it (no tree read). */
export interface CommitHeader {
  hash: string;
  subject: string;
  parents: string[];
  /** the committer date, ISO-8601 */
  committedAt: string;
  /** the committer's identity, `Name <email>` */
  committer: string;
}

/** What an entry needs to know about a commit, read from git objects (no git process). */
export interface CommitFacts extends CommitHeader {
  /** paths changed against the first parent (every path for a root commit), sorted */
  changedFiles: string[];
  /** files renamed against the first parent */
  renames: Rename[];
}

/** `Name <email>` of a commit's author or committer line (its time and zone dropped). */
export function identityOf(line: string): string {
  return line.replace(/ -?\d+ [+-]\d{4}$/, "").trim();
}

/** A file the commit renamed (its content kept or mostly kept), as recall follows it to its earlier entries. */
export interface Rename {
  from: string;
  to: string;
}

/** At most this many renames are kept of one commit (as many as changed files an entry keeps). */
const MAX_RENAMES = 1000;
/** Renames with changed content are looked for among at most this many removed and added files of one commit. */
const RENAME_CANDIDATES = 20;
/** A file larger than this is a rename only when its content is unchanged. */
const RENAME_COMPARE_MAX_BYTES = 256 * 1024;
/** Share of lines a removed and an added file must have in common to count as one renamed file (git's -M is 50%). */
const RENAME_SIMILARITY = 0.5;

function lineSet(store: ObjectStore, oid: string): Set<string> | null {
  const obj = store.tryRead(oid);
  if (!obj || obj.type !== "blob" || obj.content.length > RENAME_COMPARE_MAX_BYTES) return null;
  return new Set(obj.content.toString("utf8").split("\n"));
}

/**
 * The renames among a commit's changes, as git's rename detection finds them: a removed and an added file with the
 * same content, else with at least half their lines in common (the most similar pairs first). Read from the objects,
 * without a git process.
 */
export function renamesIn(store: ObjectStore, changes: BlobChange[]): Rename[] {
  const removed: BlobChange[] = [];
  const added: BlobChange[] = [];
  for (const c of changes) {
    if (c.from && !c.to) removed.push(c);
    else if (c.to && !c.from) added.push(c);
  }
  if (removed.length === 0 || added.length === 0) return [];
  const out: Rename[] = [];
  const taken = new Set<string>();
  // same content: matched through the blob ids, however many files moved
  const addedByBlob = new Map<string, string[]>();
  for (const a of added) {
    const list = addedByBlob.get(a.to!);
    if (list) list.push(a.path);
    else addedByBlob.set(a.to!, [a.path]);
  }
  for (const r of removed) {
    const to = addedByBlob.get(r.from!)?.shift();
    if (to === undefined) continue;
    out.push({ from: r.path, to });
    taken.add(to).add(r.path);
    if (out.length >= MAX_RENAMES) return out;
  }
  if (removed.length > RENAME_CANDIDATES || added.length > RENAME_CANDIDATES) return out;
  const pairs: { from: string; to: string; score: number }[] = [];
  const lines = new Map<string, Set<string> | null>();
  const linesOf = (oid: string) => (lines.has(oid) ? lines.get(oid)! : lines.set(oid, lineSet(store, oid)).get(oid)!);
  for (const r of removed) {
    if (taken.has(r.path)) continue;
    const before = linesOf(r.from!);
    if (!before) continue;
    for (const a of added) {
      if (taken.has(a.path)) continue;
      const after = linesOf(a.to!);
      if (!after) continue;
      let common = 0;
      for (const l of before) if (after.has(l)) common++;
      const score = common / Math.max(before.size, after.size);
      if (score >= RENAME_SIMILARITY) pairs.push({ from: r.path, to: a.path, score });
    }
  }
  pairs.sort((x, y) => y.score - x.score);
  for (const p of pairs) {
    if (taken.has(p.from) || taken.has(p.to)) continue;
    out.push({ from: p.from, to: p.to });
    taken.add(p.from).add(p.to);
  }
  return out;
}

/** Paths that differ between two trees, descending only into subtrees that differ. */
export function diffTrees(store: ObjectStore, a: string | null, b: string | null): string[] {
  const out: string[] = [];
  for (const c of diffTreeBlobs(store, a, b)) out.push(c.path);
  return out;
}

/** Reads a commit's subject, parents, changed paths and renames. */
export function commitFacts(store: ObjectStore, hash: string): CommitFacts {
  const c = parseCommit(store.read(hash, "commit").content);
  const parentTree = c.parents[0] ? parseCommit(store.read(c.parents[0], "commit").content).tree : null;
  const changes = diffTreeBlobs(store, parentTree, c.tree);
  const changedFiles: string[] = [];
  for (const ch of changes) changedFiles.push(ch.path);
  return { ...headerOf(hash, c), changedFiles: changedFiles.sort(), renames: renamesIn(store, changes) };
}

/** A commit's subject, parents, committer and date: one object read, where its changes (commitFacts) are not needed. */
export function commitHeader(store: ObjectStore, hash: string): CommitHeader {
  return headerOf(hash, parseCommit(store.read(hash, "commit").content));
}

function headerOf(hash: string, c: ReturnType<typeof parseCommit>): CommitHeader {
  return {
    hash,
    subject: subjectOf(c.message),
    parents: c.parents,
    committedAt: new Date(c.committerTime * 1000).toISOString(),
    committer: identityOf(c.committer),
  };
}

const TAG_BY_TYPE: Record<string, Tag> = {
  feat: "FEATURE",
  feature: "FEATURE",
  fix: "BUGFIX",
  bugfix: "BUGFIX",
  hotfix: "BUGFIX",
  refactor: "REFACTORING",
  perf: "REFACTORING",
  style: "REFACTORING",
  test: "TEST",
  tests: "TEST",
  docs: "DOCS",
  doc: "DOCS",
};

/** A test file by the usual conventions: under a test directory, or named as a test. */
const TEST_FILE_RE = /(^|\/)(tests?|__tests__|spec|specs|e2e)\/|(^|\/)test_[^/]*\.py$|[._-](test|spec)\.[^/]+$|_test\.(go|py|rb|rs|exs?)$/i;
/** A documentation file: under a docs directory, or prose by its name or extension. */
const DOCS_FILE_RE = /(^|\/)(docs?|documentation)\/|\.(md|mdx|markdown|rst|adoc|txt)$|(^|\/)(README|CHANGELOG|CHANGES|CONTRIBUTING|AUTHORS|LICEN[CS]E|NOTICE)[^/]*$/i;

/**
 * The tag the commit itself says, without the agent's summary: its conventional-commit prefix (`fix(x): …` →
 * BUGFIX), else a change of test files only (TEST) or documentation only (DOCS); null when nothing says it, so
 * the entry stays untagged instead of claiming a kind of work.
 */
export function inferTag(subject: string, changedFiles: readonly string[] = []): Tag | null {
  const m = /^([A-Za-z]+)(?:\([^)]*\))?!?:/.exec(subject.trim());
  const byPrefix = m ? TAG_BY_TYPE[m[1]!.toLowerCase()] : undefined;
  if (byPrefix) return byPrefix;
  if (changedFiles.length === 0) return null;
  if (changedFiles.every((f) => TEST_FILE_RE.test(f))) return "TEST";
  if (changedFiles.every((f) => DOCS_FILE_RE.test(f))) return "DOCS";
  return null;
}

/** How many merged commits a merge's default diff summary lists. */
const MERGE_LIST_MAX = 30;

/**
 * The default diff summary of a merge commit: the commits it brought in (reachable from its other parents, not
 * from the first) and the files it changed against the first parent. "" for an ordinary commit.
 */
export function mergeSummary(commonDir: string, facts: CommitFacts): string {
  if (facts.parents.length < 2) return "";
  const [first, ...others] = facts.parents;
  const r = gitSync(["--git-dir", commonDir, "log", "--no-decorate", "--format=%h %s", `-n${MERGE_LIST_MAX + 1}`, ...others, `^${first}`]);
  const lines = r.code === 0 ? r.stdout.split("\n").filter(Boolean) : [];
  const listed = lines.slice(0, MERGE_LIST_MAX).map((l) => `- ${l}`);
  if (lines.length > MERGE_LIST_MAX) listed.push("- …");
  const files = facts.changedFiles.length;
  return [
    `Merge of ${lines.length > MERGE_LIST_MAX ? `more than ${MERGE_LIST_MAX}` : lines.length} commit${lines.length === 1 ? "" : "s"} ` +
      `(${files} file${files === 1 ? "" : "s"} changed against the first parent):`,
    ...listed,
  ].join("\n");
}
