/**
 * Working through the capture queue (queue.ts): the detached worker a hook starts, and every reader of the timeline
 * before it reads (`capture`, `sync`, pre-push, `history`, `why`, `ui`, post-rewrite) — one drainer at a time per
 * repository, under `queue/drain.lock`, jobs in the order they were queued. A job's file goes once its work is stored;
 * a job that keeps failing is set aside as `.failed` and logged.
 */
import { readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { latestSessionEntry, readEntry } from "../../store/timeline.ts";
import { ObjectStore } from "../../store/objects.ts";
import type { RedactOptions } from "../../redact/index.ts";
import { redactOptionsFor } from "../config-files.ts";
import { createLogger, type Logger } from "../log.ts";
import { findRepo, repoAt, type RepoPaths } from "../repo.ts";
import { isValidSessionId, sessionFiles, type SessionFiles } from "../session.ts";
import { withSessionSecrets } from "../session-secrets.ts";
import { AGENT_NAMES } from "../../agents/types.ts";
import { describeError } from "../../errors.ts";
import { lockFile } from "../../util/lockfile.ts";
import { keepDelta, NO_DELTA } from "./delta.ts";
import { commitFacts } from "./facts.ts";
import { queuedJobs, queueDir, type CommitJob, type Job } from "./queue.ts";
import { writeFirstVersion } from "./record.ts";
import { storeEndedSession, storeNewLines } from "./session-store.ts";

/** A job failing this many times is set aside. */
const MAX_TRIES = 3;
/** How long a reader waits for the worker before reading without its work. */
const READER_WAIT_MS = 60_000;

/**
 * Finishes the queued capture work of the repository whose common git dir is `commonDir`, waiting for a worker
 * that is at it. One readdir when the queue is empty. Never throws: a reader goes on with what is stored.
 */
export async function drainQueue(commonDir: string, opts: { logger?: Logger; waitMs?: number } = {}): Promise<Drained> {
  const drained: Drained = { ended: [] };
  if (queuedJobs(commonDir).length === 0) return drained;
  let lock: { release(): void };
  try {
    // a pid lock file (util/lockfile.ts): a holder that is gone (a killed worker) is taken over
    lock = await lockFile(join(queueDir(commonDir), "drain.lock"), {
      pid: true,
      waitMs: opts.waitMs ?? READER_WAIT_MS,
      maxPollMs: 100,
      mode: 0o600,
      createDir: true,
      busy: (holder) => new Error(`the queue is still being worked through${holder ? ` by pid ${holder}` : ""}`),
    });
  } catch (err) {
    opts.logger?.log("warn", `queued capture work left to its worker: ${(err as Error).message}`);
    return drained;
  }
  try {
    // jobs queued while draining are taken too; a failed job stops the run (its session's later jobs wait for it)
    for (let names = queuedJobs(commonDir); names.length > 0; names = queuedJobs(commonDir)) {
      let ok = true;
      for (const name of names) {
        if (!(await runJob(commonDir, name, drained))) {
          ok = false;
          break;
        }
      }
      if (!ok) break;
    }
  } finally {
    lock.release();
  }
  return drained;
}

/** What a drain did beyond storing. */
export interface Drained {
  /** the roots of the repositories (worktrees) where a session's end was stored */
  ended: string[];
}

/**
 * The worker's command line: `aiflare __capture-worker <common dir>`. Where a session ended, it also saves the next
 * session start's answer (as `capture` has it saved), so that a session started after one that left its last commit
 * without a summary reads it rather than computing it.
 */
export async function runWorker(args: string[]): Promise<void> {
  const commonDir = args[0];
  if (!commonDir) return;
  const { ended } = await drainQueue(commonDir);
  if (ended.length === 0) return;
  const { refreshStartAnswer } = await import("../recall/session-start.ts");
  for (const root of new Set(ended)) await refreshStartAnswer(root, process.env);
}

/** A job file's contents, checked enough to be run; null when unreadable. */
function readJob(path: string): (Job & { tries?: number }) | null {
  let job: Job & { tries?: number };
  try {
    job = JSON.parse(readFileSync(path, "utf8")) as Job & { tries?: number };
  } catch {
    return null;
  }
  const ok =
    job &&
    (job.kind === "end" || job.kind === "commit") &&
    typeof job.root === "string" &&
    (AGENT_NAMES as readonly string[]).includes(job.agent) &&
    typeof job.session === "string" &&
    isValidSessionId(job.session) &&
    Number.isSafeInteger(job.upTo);
  return ok ? job : null;
}

/** Runs one queued job and removes its file; false when it failed and stays (or was set aside). */
async function runJob(commonDir: string, name: string, drained: Drained): Promise<boolean> {
  const path = join(queueDir(commonDir), name);
  const job = readJob(path);
  // a job for another repository, or one not readable, is never run
  const repo = job ? findRepo(job.root) : null;
  const logger = createLogger({ component: "capture worker", root: repo?.root });
  if (!job || !repo || repo.root !== job.root || repo.commonDir !== commonDir) {
    logger.log("warn", "a queued capture job was not readable; set aside", { job: name });
    renameSync(path, `${path}.failed`);
    return true;
  }
  const files = sessionFiles(job.root, job.agent, job.session);
  try {
    if (job.kind === "commit") {
      await writeQueuedCommit(job, repo, files, logger);
    } else {
      // a later job of the same session (it resumed) still needs the log's positions as they are: looked for again
      // under the session's lock, which the commit hook holds from taking its delta to queueing it
      const later = () => queuedJobs(commonDir).some((n) => n > name && sameSession(join(queueDir(commonDir), n), job));
      await storeEndedSession(files, repo, job.session, job.upTo, later, logger);
      drained.ended.push(repo.root);
    }
    rmSync(path, { force: true });
    return true;
  } catch (err) {
    const tries = (job.tries ?? 0) + 1;
    logger.log("warn", `queued capture work failed: ${describeError(err)}`, { session: job.session, job: name, tries });
    if (tries >= MAX_TRIES) {
      renameSync(path, `${path}.failed`);
      return true;
    }
    writeFileSync(path, `${JSON.stringify({ ...job, tries })}\n`);
    return false;
  }
}

function sameSession(path: string, job: Job): boolean {
  const other = readJob(path);
  return other !== null && other.root === job.root && other.agent === job.agent && other.session === job.session;
}

/**
 * The entries of a commit job, written exactly as the commit hook wrote them in its own process: the first commit
 * takes the delta, each later one is grouped after the one before; then the session's lines up to the hook's moment
 * are stored. A failed transcript store leaves the lines in the live log for the next store.
 */
async function writeQueuedCommit(job: CommitJob, repo: RepoPaths, files: SessionFiles, logger: Logger): Promise<void> {
  const redact = await redactOptionsFor(job.root, logger);
  // the commit hook took the delta; its copy in the delta file is kept here, as capture does when it takes one
  keepDelta(files, job.delta.text);
  await withSessionSecrets(files, redact, async (known: RedactOptions) => {
    const now = new Date(job.at);
    let first = true;
    for (const made of job.made) {
      const target = repoAt(made.root, repo);
      const store = new ObjectStore(target.commonDir);
      try {
        // found through the timeline, so a resumed session (same id, fresh live files) keeps its groups
        let previous = await latestSessionEntry(target, job.session, made.commits[0]!.hash);
        for (const commit of made.commits) {
          // written by this job already (a worker killed before it removed the job): its delta is not added twice
          const written = await readEntry(target, commit.hash);
          if (written?.capturedAt === job.at) {
            previous = written;
            first = false;
            continue;
          }
          const entry = await writeFirstVersion({
            repo: target,
            facts: commitFacts(store, commit.hash),
            ...(commit.amendedFrom ? { amendedFrom: commit.amendedFrom } : {}),
            sessionId: job.session,
            agent: job.agent,
            branch: made.branch,
            delta: first ? job.delta : NO_DELTA,
            previous,
            redact: known,
            now,
            about: {
              model: job.about.model,
              // a resumed session has fresh live files: its earlier entries still say which session it continued
              continuedFrom: job.about.continuedFrom ?? previous?.continuedFrom,
            },
          });
          previous = entry;
          first = false;
        }
      } finally {
        store.close();
      }
    }
    try {
      await storeNewLines(files, repo, job.session, known, undefined, job.upTo);
    } catch (err) {
      // the lines stay in the live log and go with the next store
      logger.log("warn", `session transcript not stored: ${(err as Error).message}`, { session: job.session });
    }
  });
  logger.log("info", "captured", { session: job.session, commits: job.made.flatMap((m) => m.commits.map((c) => c.hash.slice(0, 12))).join(",") });
}
