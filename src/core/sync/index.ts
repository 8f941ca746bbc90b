import { removeStaleTempFiles } from "../../store/cleanup.ts";
import { finishQueued } from "../capture/queue.ts";
import { readdirSync, readFileSync, rmSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { AiflareError, describeError, isAiflareError } from "../../errors.ts";
import { loadConfig, maskKey } from "../config.ts";
import { createLogger } from "../log.ts";
import { findRepo } from "../repo.ts";
import { sessionSecrets } from "../session-secrets.ts";
import type { SecretMemory } from "../../redact/index.ts";
import { revParseCommit } from "../../util/git.ts";
import { isFullHash } from "../../util/ids.ts";
import { linkLandedCommits, recentFirstParents } from "../links/landed.ts";
import { createClient } from "./client.ts";
import { summaryLogLine } from "./format.ts";
import { claimSyncTarget, syncStatus, withIndex, type SyncTargetStatus } from "../../store/index-db.ts";
import { createIndexSource } from "./index-source.ts";
import { acquireSyncLock } from "./lock.ts";
import { emptySummary, runSync, type SyncSummary } from "./run.ts";
import { configHints, configProblem, endpointProblem, pushQueueDir, syncLockPath, syncTarget } from "./settings.ts";

/** A sync matches at most this many landed commits without an entry, and starts none after this long. */
const SYNC_MAX_LINKS = 20;
const SYNC_LINK_BUDGET_MS = 5_000;

export interface SyncRepositoryOptions {
  cwd: string;
  env: Record<string, string | undefined>;
  /** commits as the user typed them (any revision git understands) */
  commits?: string[];
  all?: boolean;
  dryRun?: boolean;
  /** a file of full commit hashes written by the pre-push hook; read, then removed */
  commitsFile?: string;
  onProgress?: (done: number, total: number) => void;
}

export type SyncOutcome =
  | { status: "not-configured"; message: string; summary?: SyncSummary }
  | { status: "done"; endpoint: string; key: string; summary: SyncSummary };

/** Resolves revisions to full commit hashes; a name git does not know is an error that names it. */
export function resolveCommits(root: string, revs: string[]): string[] {
  return revs.map((rev) => {
    if (rev.startsWith("-")) throw new AiflareError("INVALID_ARGUMENT", `not a commit: ${rev}`);
    const hash = revParseCommit(root, rev);
    if (!hash) {
      throw new AiflareError("INVALID_ARGUMENT", `not a commit in this repository: ${rev}`);
    }
    return hash;
  });
}

function readCommitsFile(file: string): string[] {
  try {
    return readFileSync(file, "utf8")
      .split("\n")
      .map((l) => l.trim())
      .filter(isFullHash);
  } finally {
    rmSync(file, { force: true });
  }
}

/**
 * `aiflare sync`: loads the config, takes the sync lock, and sends what is pending (or the given
 * commits) through the redactor to the backend. Outcomes go to the summary and the log file.
 */
export async function syncRepository(opts: SyncRepositoryOptions): Promise<SyncOutcome> {
  const repo = findRepo(opts.cwd);
  if (!repo) throw new AiflareError("NOT_A_REPO", "not inside a git repository; run aiflare sync from your project");
  const fromHook = opts.commitsFile !== undefined;
  const logger = createLogger({ root: repo.root, component: fromHook ? "sync (pre-push)" : "sync" });
  // the entries and transcripts the hooks queued go with this sync
  await finishQueued(repo.commonDir);
  // every push runs a sync: the moment to tidy what killed writers left (never fails the sync)
  try {
    const removed = removeStaleTempFiles(repo.commonDir);
    if (removed > 0) logger.log("info", "removed stale temporary files", { removed });
  } catch {
    // best effort
  }

  if (fromHook && dirname(resolve(opts.cwd, opts.commitsFile!)) !== pushQueueDir(repo)) {
    // the file is deleted after reading: only ever one the hook wrote
    throw new AiflareError("INVALID_ARGUMENT", `--from-hook takes a file from ${pushQueueDir(repo)}`);
  }
  const userCommits = opts.commits?.length ? resolveCommits(repo.root, opts.commits) : undefined;
  const config = loadConfig(repo.root, opts.env);
  const problem = configProblem(config);
  if (problem && !opts.dryRun) {
    if (fromHook) rmSync(resolve(opts.cwd, opts.commitsFile!), { force: true });
    return { status: "not-configured", message: problem };
  }
  const unsafe = endpointProblem(config);
  if (unsafe && !opts.dryRun) throw new AiflareError("CONFIG", unsafe);

  const { keyHint, endpointHint } = configHints(config);
  const client =
    problem || opts.dryRun
      ? undefined
      : createClient({
          endpoint: config.endpoint!,
          apiKey: config.apiKey!,
          keyHint,
          endpointHint,
          allowInsecureHttp: config.allowInsecureHttp,
        });
  // what was sent is remembered per backend and project: a new one gets everything it lacks
  const target = syncTarget(config);
  // what redaction found in sessions still live here is redacted wherever they repeat it, as their later writes do
  const secrets = new Map<string, SecretMemory | undefined>();
  const knownSecrets = (id: string) => {
    if (!secrets.has(id)) secrets.set(id, sessionSecrets(repo.root, id));
    return secrets.get(id);
  };
  const syncOnce = async (commits: string[] | undefined): Promise<SyncSummary> => {
    const summary = await withIndex(repo.commonDir, (db) => {
      if (target && client) claimSyncTarget(db, target);
      return runSync(
        { commits, all: opts.all, dryRun: opts.dryRun, quietMissing: fromHook },
        { source: createIndexSource(db, target?.target ?? ""), client, redact: config.redact, knownSecrets, onProgress: opts.onProgress },
      );
    });
    if (!opts.dryRun) {
      const level = summary.failed.length ? "warn" : "info";
      logger.log(level, summaryLogLine(summary), { commits: commits?.length });
    }
    return summary;
  };

  // the links of landed commits a pull's hook left for later (or made before aiflare's hooks) go with this sync
  if (!opts.dryRun) {
    try {
      // (its outcome shows in the links sent; the sync's one log line stays its summary)
      await linkLandedCommits(repo, recentFirstParents(), { max: SYNC_MAX_LINKS, budgetMs: SYNC_LINK_BUDGET_MS });
    } catch (err) {
      logger.log("warn", `linking landed commits failed: ${describeError(err)}`);
    }
  }

  // One sync at a time. A hook-started one never waits: while another runs (a slow or silent backend), it
  // exits at once and leaves its commits queued; the running one takes them when it is done, unless the
  // backend stopped answering (then they stay pending for the next sync). A manual one waits briefly.
  const lockFile = syncLockPath(repo);
  let summary: SyncSummary | undefined;
  let lock = await acquireSyncLock(lockFile, fromHook ? 0 : 2_000);
  for (;;) {
    try {
      if (!fromHook) {
        summary = await syncOnce(userCommits);
        break;
      }
      for (let commits = takeQueuedCommits(pushQueueDir(repo)); commits.length; commits = takeQueuedCommits(pushQueueDir(repo))) {
        summary = await syncOnce(commits);
        if (summary.stopped || summary.failed.length) break;
      }
    } finally {
      lock.release();
    }
    // A push that queued its commits just before the release found the lock taken: take them over.
    if (summary?.stopped || summary?.failed.length || !hasQueuedCommits(pushQueueDir(repo))) break;
    try {
      lock = await acquireSyncLock(lockFile, 0);
    } catch {
      break; // that push's own sync has it
    }
  }
  if (!summary) {
    logger.log("info", "nothing queued: an earlier sync took these commits");
    summary = emptySummary(opts.dryRun === true);
  }
  if (problem) return { status: "not-configured", message: problem, summary };
  return { status: "done", endpoint: config.endpoint!, key: maskKey(config.apiKey!), summary };
}

/**
 * `aiflare sync --status`: every backend this repository has synced with (and the configured one, even before
 * its first sync), each with what it still lacks and when it last succeeded. Sends nothing.
 */
export async function syncStatusReport(opts: {
  cwd: string;
  env: Record<string, string | undefined>;
}): Promise<{ problem: string | null; targets: (SyncTargetStatus & { current: boolean })[] }> {
  const repo = findRepo(opts.cwd);
  if (!repo) throw new AiflareError("NOT_A_REPO", "not inside a git repository; run aiflare sync from your project");
  const config = loadConfig(repo.root, opts.env);
  const target = syncTarget(config) ?? undefined;
  const targets = await withIndex(repo.commonDir, (db) => syncStatus(db, target));
  return { problem: configProblem(config), targets };
}

function hasQueuedCommits(dir: string): boolean {
  try {
    return readdirSync(dir).some((n) => n.endsWith(".txt"));
  } catch {
    return false;
  }
}

/** Reads and removes every queued commits file of the pre-push hook (oldest first); their commits, once each. */
function takeQueuedCommits(dir: string): string[] {
  let names: string[];
  try {
    names = readdirSync(dir).filter((n) => n.endsWith(".txt")).sort();
  } catch {
    return [];
  }
  return [...new Set(names.flatMap((n) => readCommitsFile(join(dir, n))))];
}

/** The background half of the pre-push hook: like `syncRepository`, but every outcome goes to the log only. */
export async function syncFromHook(opts: { cwd: string; env: Record<string, string | undefined>; commitsFile: string }): Promise<void> {
  try {
    await syncRepository(opts);
  } catch (err) {
    const repo = findRepo(opts.cwd);
    if (!repo) return;
    const logger = createLogger({ root: repo.root, component: "sync (pre-push)" });
    if (isAiflareError(err, "LOCKED")) {
      logger.log("info", "another sync is running; the pushed commits stay queued for the next sync");
      return;
    }
    logger.log("error", `background sync failed; entries stay pending: ${describeError(err)}`);
  }
}
