/**
 * The team's part of the session-start recall: the branch's recent commits recorded by teammates, from the team
 * cache (`aiflare pull`, earlier lookups) and, for commits it knows nothing of, the team server within a short
 * deadline, silent when offline. Loaded by a dynamic import, only when the clone has a team cache or a backend may
 * be configured.
 */
import type { Entry } from "../../store/entry.ts";
import { toRecallEntry, type RecallEntry } from "../../store/index/recall.ts";
import { execGit } from "../../util/git.ts";
import { isFullHash } from "../../util/ids.ts";
import type { RepoPaths } from "../repo.ts";
import { teamEntries } from "../team/index.ts";

/** The session start waits at most this long for the team server (commits the cache already knows wait for nothing). */
export const TEAM_START_DEADLINE_MS = 300;
/** How many of the branch's most recent commits (merged ones included) are looked at. */
const RECENT_COMMITS = 30;

/** The branch's most recent commits, merged ones included, newest first. */
export async function recentCommits(root: string): Promise<string[]> {
  const r = await execGit(["rev-list", `--max-count=${RECENT_COMMITS}`, "HEAD", "--"], { cwd: root, timeoutMs: 1000 });
  return r.code === 0 ? new TextDecoder().decode(r.stdout).split("\n").filter(isFullHash) : [];
}

/** A teammate's entry as recall shows it: marked as the team's, with its author when known. */
function teamRecallEntry(e: Entry): RecallEntry {
  const author = e.author?.replace(/\s*<[^>]*>\s*$/, "").trim();
  return { ...toRecallEntry(JSON.stringify(e)), from: author ? `the team, ${author}` : "the team" };
}

/**
 * The team's entries of `commits` (newest first) this clone has none of, at most `limit`, newest first. Never
 * throws: no backend, an offline or slow server give what the cache holds.
 */
export async function teamStartEntries(repo: RepoPaths, env: Record<string, string | undefined>, commits: string[], limit: number): Promise<RecallEntry[]> {
  if (commits.length === 0) return [];
  try {
    const found = await teamEntries(repo, commits, { env, deadlineMs: TEAM_START_DEADLINE_MS });
    const out: RecallEntry[] = [];
    for (const h of commits) {
      const e = found.get(h);
      if (e && out.length < limit) out.push(teamRecallEntry(e));
    }
    return out;
  } catch {
    return [];
  }
}
