/**
 * Links computed when landed commits arrive (README "When links are computed"): the commits a `git pull` brought
 * (git's post-merge hook) and, on `aiflare sync`, the recent commits of the current branch. Each commit with no
 * entry, no link and no remembered miss is matched once (match.ts): a found link is written to the timeline branch
 * and the index, where `sync` finds it and sends it to the team server.
 */
import { withIndex } from "../../store/index-db.ts";
import { cachedLink } from "../../store/index/links.ts";
import { readRef, TIMELINE_REF } from "../../store/refs.ts";
import { gitSync } from "../../util/git.ts";
import { isFullHash } from "../../util/ids.ts";
import { describeError } from "../../errors.ts";
import { createLogger } from "../log.ts";
import { findRepo, type RepoPaths } from "../repo.ts";
import { LINK_WINDOW_MS, linkOf } from "./match.ts";

/** The rev-list arguments of a sync's pass: the current branch's first parents of the link window. */
export function recentFirstParents(nowMs = Date.now()): string[] {
  return ["--first-parent", `--since=${Math.floor((nowMs - LINK_WINDOW_MS) / 1000)}`, "HEAD"];
}

/** What one pass of linking landed commits did. */
export interface LandedOutcome {
  /** commits looked at (no entry of their own) */
  looked: number;
  /** links found and written */
  linked: string[];
  /** commits not looked at: the count or time bound was reached */
  deferred: number;
}

/**
 * Matches the commits of `revs` (git rev-list arguments, newest first; merge commits left out) that have no entry and
 * no known link, at most `max` of them and no new one after `budgetMs`: what is left is matched by the next pass
 * (`aiflare sync`) or lazily by the views. Never throws: a repository without a timeline has nothing to match.
 */
export async function linkLandedCommits(repo: RepoPaths, revs: string[], opts: { max: number; budgetMs: number; now?: () => number }): Promise<LandedOutcome> {
  const out: LandedOutcome = { looked: 0, linked: [], deferred: 0 };
  if (!readRef(repo.commonDir, TIMELINE_REF)) return out;
  const now = opts.now ?? (() => performance.now());
  const start = now();
  const r = gitSync(["rev-list", "--no-merges", ...revs, "--"], { cwd: repo.root });
  if (r.code !== 0) return out;
  const hashes = r.stdout.split("\n").filter(isFullHash);
  if (hashes.length === 0) return out;
  await withIndex(repo.commonDir, async (db) => {
    const hasEntry = db.query("SELECT 1 FROM entries WHERE commit_hash = ? LIMIT 1");
    for (const [i, h] of hashes.entries()) {
      if (hasEntry.get(h) || cachedLink(db, h) !== undefined) continue;
      if (out.looked >= opts.max || now() - start >= opts.budgetMs) {
        out.deferred = hashes.length - i;
        break;
      }
      out.looked++;
      const link = await linkOf({ db, commonDir: repo.commonDir }, h);
      if (link) out.linked.push(h);
    }
  });
  return out;
}

/** A `git pull` brings at most this many commits' links in its hook; the rest wait for `aiflare sync`. */
export const HOOK_MAX_LINKS = 5;
/** …and starts none after this long, so a pull of a large range never waits long on aiflare. */
export const HOOK_BUDGET_MS = 1000;

/** What a pull or rebase brought: the commits of HEAD not in the tip before it (the newest thousand). */
const ARRIVED = ["--max-count=1000", "HEAD", "^ORIG_HEAD"];

/** Runs one git hook's linking in the hook's bounds, logging what it did; never throws. */
async function linkInHook(cwd: string, hook: string, revs: (repo: RepoPaths) => string[] | null): Promise<LandedOutcome | null> {
  const repo = findRepo(cwd);
  if (!repo) return null;
  const logger = createLogger({ component: `hook ${hook}`, stderr: true, root: repo.root });
  try {
    const range = revs(repo);
    if (!range) return null;
    const done = await linkLandedCommits(repo, range, { max: HOOK_MAX_LINKS, budgetMs: HOOK_BUDGET_MS });
    if (done.looked) logger.log("info", "linked landed commits", { looked: done.looked, linked: done.linked.length, deferred: done.deferred });
    return done;
  } catch (err) {
    logger.log("error", `${hook} failed: ${describeError(err)}`);
    return null;
  }
}

/**
 * git's post-merge hook (a `git pull` or `git merge` that made or moved to a commit; a `merge --squash`, which made
 * none yet, has nothing to link): links the commits that arrived, within the hook's bounds.
 */
export function runPostMerge(opts: { squashFlag: string | undefined; cwd: string }): Promise<LandedOutcome | null> {
  if (opts.squashFlag === "1") return Promise.resolve(null);
  return linkInHook(opts.cwd, "post-merge", () => ARRIVED);
}

/**
 * After git's post-rewrite hook of a rebase (a `git pull --rebase` over commits of one's own) moved the entries:
 * links the commits the rebase put them on (`HEAD` not in `ORIG_HEAD`, the tip before it), within the hook's bounds.
 */
export function linkAfterRebase(cwd: string): Promise<LandedOutcome | null> {
  return linkInHook(cwd, "post-rewrite", () => ARRIVED);
}
