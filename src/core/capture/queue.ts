/**
 * The capture queue: work a hook hands to a detached worker instead of making the agent wait for it — the entries of
 * a commit the commit hook found, a session's transcript at SessionEnd. Each job is a file in
 * `<git common dir>/aiflare/queue/`, written whole (temp file and rename) before the hook answers, holding all that
 * cannot be recomputed later; it is removed once its work is stored. The worker (`aiflare __capture-worker`) works
 * through the queue in order; whatever reads or sends the timeline first finishes what is left (drain.ts), so a
 * killed worker or a machine that stopped loses nothing. This module stays light: the hooks load it.
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { atomicWrite, ensureOwnDir, ownFileSize } from "../fsutil.ts";
import type { HookContext } from "../hook/types.ts";
import type { Logger } from "../log.ts";
import type { AgentName } from "../session.ts";
import type { Delta } from "./delta.ts";
import { startDetachedSelf } from "../../util/self.ts";

/** The hidden first argument that runs the worker (recognised in main.ts). */
export const WORKER_ARG = "__capture-worker";

/** Set (to anything) to leave queued work to the next reader instead of starting the worker. */
export const NO_WORKER_ENV = "AIFLARE_NO_CAPTURE_WORKER";

interface JobBase {
  /** the working tree whose `.context-capture/` holds the session's live files */
  root: string;
  agent: AgentName;
  session: string;
  /** the live log's size when the job was queued: what the stored transcript takes, and no more */
  upTo: number;
}

/** SessionEnd: store the session's transcript up to `upTo`, then shrink its live files. */
export interface EndJob extends JobBase {
  kind: "end";
}

/** A commit hook that found commits: their entries, as the hook would have written them, then the transcript. */
export interface CommitJob extends JobBase {
  kind: "commit";
  /** when the hook ran (the entries' capturedAt and recordedAt) */
  at: string;
  /** the conversation since the previous capture, taken by the first commit */
  delta: Pick<Delta, "text" | "hasUser" | "continuation">;
  /** the session's model and the session it continued, as its state held them */
  about: { model?: string; continuedFrom?: string };
  /** per repository (a command may commit in several): its working tree, branch then, and commits oldest first */
  made: { root: string; branch: string; commits: { hash: string; amendedFrom?: string }[] }[];
}

export type Job = EndJob | CommitJob;

/** The queue's directory in a repository's common git dir. */
export function queueDir(commonDir: string): string {
  return join(commonDir, "aiflare", "queue");
}

/** The queued jobs' file names, oldest first (none when the directory is absent): one readdir. */
export function queuedJobs(commonDir: string): string[] {
  const dir = queueDir(commonDir);
  // looked for first: a repository where no hook queued anything yet has none, and a thrown ENOENT costs a hook more
  if (!existsSync(dir)) return [];
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return [];
  }
  const jobs: string[] = [];
  for (const n of names) if (n.endsWith(".job")) jobs.push(n);
  return jobs.sort();
}

/** The commits whose entries queued jobs will write: a commit hook looking again must not queue them twice. */
export function queuedCommits(commonDir: string): Set<string> {
  const hashes = new Set<string>();
  for (const name of queuedJobs(commonDir)) {
    try {
      const job = JSON.parse(readFileSync(join(queueDir(commonDir), name), "utf8")) as Partial<CommitJob>;
      if (job.kind === "commit" && Array.isArray(job.made)) for (const m of job.made) for (const c of m.commits) hashes.add(c.hash);
    } catch {
      // done and removed meanwhile
    }
  }
  return hashes;
}

/**
 * Finishes the repository's queued capture work before its timeline is read or sent (drain.ts, loaded only when
 * something is queued): one readdir when nothing is.
 */
export async function finishQueued(commonDir: string): Promise<void> {
  if (queuedJobs(commonDir).length === 0) return;
  await (await import("./drain.ts")).drainQueue(commonDir);
}

let counter = 0;

/** Queues a job: written whole before this returns. Names sort in the order jobs were queued. */
export function enqueue(commonDir: string, job: Job): void {
  const dir = queueDir(commonDir);
  ensureOwnDir(commonDir, dir);
  // padded by slicing: padStart is compiled from JavaScript on its first call, which costs a hook more
  const name = `${`00000000000000${Date.now()}`.slice(-15)}-${`0000000${process.pid}`.slice(-8)}-${counter++}.job`;
  atomicWrite(join(dir, name), `${JSON.stringify(job)}\n`, 0o600);
}

/**
 * Starts the detached worker for the repository (unless NO_WORKER_ENV is set); it outlives the hook. A worker that
 * cannot be started is logged: the work stays queued for the next reader.
 */
export async function startWorker(root: string, commonDir: string, env: Record<string, string | undefined>, logger?: Logger): Promise<void> {
  if (env[NO_WORKER_ENV]) return;
  try {
    startDetachedSelf([WORKER_ARG, commonDir], { cwd: root, env });
  } catch (err) {
    logger?.log("warn", `capture worker not started, its work stays queued: ${(err as Error).message}`);
  }
}

/**
 * SessionEnd's share: the live log and its state already hold the session durably, so the hook only queues the
 * store of its rest and the compaction of its live files, and starts the worker.
 */
export async function queueSessionEnd(ctx: HookContext): Promise<void> {
  enqueue(ctx.repo.commonDir, {
    kind: "end",
    root: ctx.repo.root,
    agent: ctx.input.agent,
    session: ctx.input.sessionId,
    upTo: ownFileSize(ctx.files.prompts) ?? 0,
  });
  await startWorker(ctx.repo.root, ctx.repo.commonDir, ctx.env, ctx.logger);
}
