/**
 * How recall's hooks reach the index without ever stalling the agent: a current index is read at once; one a
 * few entries behind is refreshed inline (incremental); a missing or unreadable one is rebuilt inline only for a
 * small timeline, and otherwise by a detached `aiflare` process while the hooks go without recall.
 */
import { closeSync, openSync, rmSync, statSync } from "node:fs";
import { join } from "node:path";
import type { Database } from "bun:sqlite";
import { readCurrentIndex } from "../../store/index/recall.ts";
import { TIMELINE_REF } from "../../store/refs.ts";
import { CONTEXT_DIR } from "../session.ts";

/** Up to this many timeline commits, a missing index is built inline (well under a second). */
const INLINE_BUILD_MAX_COMMITS = 1000;
/** While a background build is younger than this, hooks do not touch the index. */
const BUILD_MARK_TTL_MS = 10 * 60 * 1000;

function buildMark(root: string): string {
  return join(root, CONTEXT_DIR, ".recall-index-build");
}

function fresh(path: string): boolean {
  try {
    return Date.now() - statSync(path).mtimeMs < BUILD_MARK_TTL_MS;
  } catch {
    return false;
  }
}

async function smallTimeline(commonDir: string): Promise<boolean> {
  const { execGit } = await import("../../util/git.ts");
  const r = await execGit(["--git-dir", commonDir, "rev-list", "--count", `--max-count=${INLINE_BUILD_MAX_COMMITS + 1}`, TIMELINE_REF], {
    timeoutMs: 2000,
  });
  const n = Number.parseInt(new TextDecoder().decode(r.stdout).trim(), 10);
  return r.code === 0 && Number.isFinite(n) && n <= INLINE_BUILD_MAX_COMMITS;
}

/** Starts one detached `aiflare history list --limit 1`, which builds the index; at most one at a time. */
async function startBackgroundBuild(root: string, env: Record<string, string | undefined>): Promise<void> {
  const mark = buildMark(root);
  if (fresh(mark)) return;
  rmSync(mark, { force: true });
  closeSync(openSync(mark, "wx", 0o600)); // a racing hook that lost this starts nothing
  const { startDetachedSelf } = await import("../../util/self.ts");
  startDetachedSelf(["history", "list", "--limit", "1"], { cwd: root, env });
}

/**
 * Runs `fn` on a current index. Returns null when the repository has no timeline, and undefined when the
 * index is being built in the background (recall skips this time; nothing should be marked as done).
 */
export async function readRecallIndex<T>(
  repo: { root: string; commonDir: string },
  env: Record<string, string | undefined>,
  fn: (db: Database) => T,
): Promise<T | null | undefined> {
  const read = readCurrentIndex(repo.commonDir, fn);
  if (read.state === "no-timeline") return null;
  if (read.state === "current") return read.value;
  if (fresh(buildMark(repo.root))) return undefined;
  if (read.state === "behind" || (await smallTimeline(repo.commonDir))) {
    const { withIndex } = await import("../../store/index-db.ts");
    return withIndex(repo.commonDir, (db) => fn(db));
  }
  await startBackgroundBuild(repo.root, env);
  return undefined;
}
