import { lstatSync } from "node:fs";
import { shellQuote } from "../install/binary.ts";
import { snapshot } from "../../store/branch.ts";
import { ObjectStore, parseCommit, subjectOf } from "../../store/objects.ts";
import { entryPath, TIMELINE_REF } from "../../store/refs.ts";
import { ownFileSize } from "../fsutil.ts";
import type { HookContext, HookOutput } from "../hook/types.ts";
import { repoAt, type RepoPaths } from "../repo.ts";
import type { SessionFiles } from "../session.ts";
import { readLogState, updateLogState, withSessionLock, type LogState } from "../session-log.ts";
import { commitCut, peekDelta } from "./delta.ts";
import type { CommitInvocation } from "./detect.ts";
import { enqueue, queuedCommits, startWorker } from "./queue.ts";
import { currentBranch, findNewCommits, toolOutput, type MadeCommit } from "./verify.ts";

/** Without the call's duration, a commit counts as made by the command when its reflog line is at most this old. */
export const COMMIT_WINDOW_SEC = 11 * 60;
/** Reflog times are whole seconds and the hook starts a moment after the call ends: the margin around the call. */
const CALL_MARGIN_SEC = 2;
/** At most this many commits of one tool call get an entry; the rest are logged as skipped. */
export const MAX_COMMITS_PER_CALL = 100;

/** The full path of the binary running this hook, quoted for the shell, for the commands the agent is told to run. */
export function binaryPath(): string {
  return shellQuote(process.execPath);
}

/** The reminder the agent gets after a commit: the hashes to summarise and the exact command to run. */
export function captureReminder(commits: { hash: string; subject: string }[]): string {
  const list = commits.map((c) => `${c.hash} ("${c.subject.slice(0, 100)}")`).join(", ");
  const bin = binaryPath();
  return (
    `aiflare recorded ${commits.length === 1 ? "commit" : "commits"} ${list} on its timeline. ` +
    `Now run the context-capture skill for ${commits.length === 1 ? "it" : "each of them"}: write why the change was made ` +
    `(title, intent, alternatives, diff summary, tag) and save it with \`${bin} capture --commit-hash ${commits[0]!.hash} …\`` +
    (commits.length > 1 ? ` (once per hash)` : "") +
    `.`
  );
}

/**
 * The window, in seconds before now, in which this tool call's commits were made: the call's duration when the
 * agent reports it; else back to the session's last recorded prompt or reply (the call came after it), at most
 * {@link COMMIT_WINDOW_SEC}.
 */
function callWindowSec(durationMs: number | undefined, files: Pick<SessionFiles, "prompts">, now: number): number {
  if (durationMs !== undefined && Number.isFinite(durationMs) && durationMs >= 0) {
    return Math.min(COMMIT_WINDOW_SEC, Math.ceil(durationMs / 1000) + CALL_MARGIN_SEC);
  }
  try {
    const since = lstatSync(files.prompts).mtimeMs / 1000;
    return Math.max(CALL_MARGIN_SEC, Math.min(COMMIT_WINDOW_SEC, Math.ceil(now - since) + CALL_MARGIN_SEC));
  } catch {
    return COMMIT_WINDOW_SEC;
  }
}

/** True when the timeline holds an entry file for the commit (found by its path, not read). */
function hasEntry(repo: RepoPaths, hash: string): boolean {
  const store = new ObjectStore(repo.commonDir);
  try {
    return snapshot(store, TIMELINE_REF).blobHashAt(entryPath(hash)) !== null;
  } finally {
    store.close();
  }
}

/**
 * Captures each commit that the git invocations of a shell command really made. `reflogSeen`: the HEAD reflogs as
 * they were before the look, kept in the session's state once it is done.
 */
export async function captureCommits(ctx: HookContext, invocations: CommitInvocation[], reflogSeen: string | null = null): Promise<HookOutput> {
  const repos = new Map<string, { repo: RepoPaths; count: number }>();
  for (const inv of invocations) {
    const repo = repoAt(inv.dir, ctx.repo);
    const seen = repos.get(repo.gitDir);
    if (seen) seen.count++;
    else repos.set(repo.gitDir, { repo, count: 1 });
  }
  const output = [toolOutput(ctx.input.toolResponse), ctx.input.toolError ?? ""].filter(Boolean).join("\n");
  const now = Date.now() / 1000;
  const windowSec = callWindowSec(ctx.input.durationMs, ctx.files, now);
  const made: { repo: RepoPaths; commits: MadeCommit[] }[] = [];
  const queued = queuedCommits(ctx.repo.commonDir);
  let budget = MAX_COMMITS_PER_CALL;
  for (const { repo, count } of repos.values()) {
    if (budget <= 0) break;
    let commits = await findNewCommits(repo, {
      now,
      windowSec,
      output,
      max: Math.min(count, budget + 1),
      single: invocations.length === 1,
      // a commit queued by an earlier hook has its entry on the way
      isCaptured: async (hash) => queued.has(hash) || hasEntry(repo, hash),
      // the timeline's reader (entry schema, redactor) only for an amend
      movedHere: async (from, to) => (await import("../../store/timeline.ts")).movedByRewrite(repo, from, to),
    });
    if (commits.length > budget) {
      ctx.logger.log("warn", "too many commits in one tool call; the oldest were skipped", {
        session: ctx.input.sessionId,
        kept: budget,
        skipped: commits.length - budget,
      });
      commits = commits.slice(-budget);
    }
    budget -= commits.length;
    if (commits.length) made.push({ repo, commits });
  }
  const seen = (): Partial<LogState> => (reflogSeen !== null ? { reflogSeen } : {});
  if (made.length === 0) {
    if (reflogSeen !== null) updateLogState(ctx.files, seen);
    ctx.logger.log("info", "git commit in command but no new commit found", { session: ctx.input.sessionId });
    return undefined;
  }

  return queueMade(ctx, made, seen);
}

/**
 * An allowlist (`redact.allow`) can let a hard secret through the redactor's first stage, and the second then refuses
 * the write: with one, the entry's texts are put through both stages here, so that a refusal is known before the
 * delta is taken and the agent told of an entry — the hook fails as the write would (nothing taken, nothing said).
 * Without an allowlist the first stage replaces every hard secret, and nothing is loaded.
 */
async function refusalCheck(ctx: HookContext): Promise<((texts: string[]) => void) | null> {
  const { redactOptionsFor } = await import("../config-files.ts");
  const redact = await redactOptionsFor(ctx.repo.root, ctx.logger);
  if (!redact.allow?.length) return null;
  const { redactValueForWrite } = await import("../../redact/index.ts");
  return (texts) => void redactValueForWrite(texts, redact);
}

/**
 * Queues the entries of the commits made for the capture worker, with all they need that could change meanwhile
 * (the delta, the branch, the moment, the session's model), and takes the delta: the job holds it. The session's
 * state is written once (the cut, the commits pending a summary, `also`). The agent's reminder names the commits
 * at once; the worker writes their entries and stores the session's lines up to this moment.
 */
async function queueMade(ctx: HookContext, made: { repo: RepoPaths; commits: MadeCommit[] }[], also: () => Partial<LogState>): Promise<HookOutput> {
  const sessionId = ctx.input.sessionId;
  const captured: { hash: string; subject: string }[] = [];
  for (const { repo, commits } of made) {
    const store = new ObjectStore(repo.commonDir);
    try {
      for (const c of commits) captured.push({ hash: c.hash, subject: subjectOf(parseCommit(store.read(c.hash, "commit").content).message) });
    } finally {
      store.close();
    }
  }
  const branches = made.map(({ repo }) => currentBranch(repo));
  const refuse = await refusalCheck(ctx);
  // from reading the delta to taking it, under the session's lock: the worker compacting the log (a resumed
  // session's earlier end) either comes before, or sees this job queued and leaves the log as it is
  withSessionLock(ctx.files, () => {
    const state = readLogState(ctx.files);
    const delta = peekDelta(ctx.files, state);
    refuse?.([delta.text, ...branches, ...captured.map((c) => c.subject), ctx.input.model ?? state.model ?? ""]);
    enqueue(ctx.repo.commonDir, {
      kind: "commit",
      root: ctx.repo.root,
      agent: ctx.input.agent,
      session: sessionId,
      upTo: ownFileSize(ctx.files.prompts) ?? 0,
      at: new Date().toISOString(),
      delta: { text: delta.text, hasUser: delta.hasUser, continuation: delta.continuation },
      about: { model: ctx.input.model ?? state.model, continuedFrom: state.continuedFrom },
      made: made.map(({ repo, commits }, i) => ({
        root: repo.root,
        branch: branches[i]!,
        commits: commits.map((c) => (c.amendedFrom ? { hash: c.hash, amendedFrom: c.amendedFrom } : { hash: c.hash })),
      })),
    });
    // the delta file is written by the worker, from the job, in the order the jobs were queued
    commitCut(ctx.files, delta, (s) => ({ pending: [...new Set([...s.pending, ...captured.map((c) => c.hash)])].slice(-50), ...also() }), false, state);
  });
  await startWorker(ctx.repo.root, ctx.repo.commonDir, ctx.env, ctx.logger);
  ctx.logger.log("info", "queued", { session: sessionId, commits: captured.map((c) => c.hash.slice(0, 12)).join(",") });
  const eventName = ctx.input.event === "post-tool-use-failure" ? "PostToolUseFailure" : "PostToolUse";
  return {
    hookSpecificOutput: { hookEventName: eventName, additionalContext: captureReminder(captured) },
  };
}
