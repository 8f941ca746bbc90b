import { diffTreeBlobs, ObjectStore, parseCommit, subjectOf } from "../../store/objects.ts";
import type { Tag } from "../../store/entry.ts";
import { gitSync } from "../../util/git.ts";

/** What an entry needs to know about a commit, read from git objects (no git process). */
export interface CommitFacts {
  hash: string;
  subject: string;
  parents: string[];
  /** paths changed against the first parent (every path for a root commit), sorted */
  changedFiles: string[];
  /** the committer date, ISO-8601 */
  committedAt: string;
  /** the committer's identity, `Name <email>` */
  committer: string;
}

/** `Name <email>` of a commit's author or committer line (its time and zone dropped). */
export function identityOf(line: string): string {
  return line.replace(/ -?\d+ [+-]\d{4}$/, "").trim();
}

/** Paths that differ between two trees, descending only into subtrees that differ. */
export function diffTrees(store: ObjectStore, a: string | null, b: string | null): string[] {
  const out: string[] = [];
  for (const c of diffTreeBlobs(store, a, b)) out.push(c.path);
  return out;
}

/** Reads a commit's subject, parents and changed paths. */
export function commitFacts(store: ObjectStore, hash: string): CommitFacts {
  const c = parseCommit(store.read(hash, "commit").content);
  const parentTree = c.parents[0] ? parseCommit(store.read(c.parents[0], "commit").content).tree : null;
  const changedFiles = diffTrees(store, parentTree, c.tree).sort();
  return {
    hash,
    subject: subjectOf(c.message),
    parents: c.parents,
    changedFiles,
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
