/**
 * What git knows of an entry's commit, for the entry page of `aiflare ui`: the files with their added and removed
 * line counts, and the patch. The patch is the user's own repository served to the user on 127.0.0.1 behind the
 * run's token, so it is shown as git prints it; its size is capped and the cut is said.
 */
import { execGitCapped } from "../../util/git.ts";
import type { CommitDiff, DiffStatLine } from "./contract.ts";

/** The most of a patch the page is sent. */
export const MAX_PATCH_BYTES = 256 * 1024;
/** The most files the stat lists (a vendored tree can change tens of thousands). */
const MAX_STAT_FILES = 2000;

// One view of a commit whatever its kind: a merge against its first parent, the first commit against nothing;
// no external diff or text conversion programs, no colours, paths as they are.
const DIFF_ARGS = ["--format=", "-M", "--diff-merges=first-parent", "--no-ext-diff", "--no-textconv", "--no-color"];

/** Parses `git show --numstat -z`: `added\tremoved\tpath\0`, or for a rename `added\tremoved\t\0from\0to\0`. */
export function parseNumstat(text: string): DiffStatLine[] {
  const parts = text.split("\0");
  const out: DiffStatLine[] = [];
  for (let i = 0; i < parts.length; i++) {
    const m = /^\n?(-|\d+)\t(-|\d+)\t(.*)$/s.exec(parts[i]!);
    if (!m) continue;
    const added = m[1] === "-" ? null : Number(m[1]);
    const removed = m[2] === "-" ? null : Number(m[2]);
    if (m[3] === "") {
      const from = parts[++i] ?? "";
      const path = parts[++i] ?? "";
      out.push({ path, from, added, removed });
    } else {
      out.push({ path: m[3]!, added, removed });
    }
  }
  return out;
}

/** The commit's diff stat and patch, or null when the commit is not in this repository. */
export async function commitDiff(root: string, sha: string): Promise<CommitDiff | null> {
  const git = ["-c", "core.quotePath=false", "-c", "log.showSignature=false", "show"];
  const [stat, patch] = await Promise.all([
    execGitCapped([...git, ...DIFF_ARGS, "--numstat", "-z", sha, "--"], 4 * 1024 * 1024, { cwd: root }),
    execGitCapped([...git, ...DIFF_ARGS, "--patch", sha, "--"], MAX_PATCH_BYTES, { cwd: root }),
  ]);
  if (stat.code !== 0 || patch.code !== 0) return null;
  const files = parseNumstat(new TextDecoder().decode(stat.stdout));
  let text = new TextDecoder().decode(patch.stdout);
  // a cut patch ends at its last whole line (which also drops a character split by the cut)
  if (patch.truncated) text = text.slice(0, text.lastIndexOf("\n") + 1);
  return {
    stat: files.slice(0, MAX_STAT_FILES),
    statTruncated: files.length > MAX_STAT_FILES || stat.truncated,
    patch: text,
    patchTruncated: patch.truncated,
  };
}
