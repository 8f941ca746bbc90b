import { lstatSync } from "node:fs";
import { shellQuote } from "../install/binary.ts";
import { ObjectStore } from "../../store/objects.ts";
import { latestSessionEntry, movedByRewrite, readEntry } from "../../store/timeline.ts";
import type { HookContext, HookOutput } from "../hook/types.ts";
import { findRepo, type RepoPaths } from "../repo.ts";
import type { SessionFiles } from "../session.ts";
import { readLogState, updateLogState, type LogState } from "../session-log.ts";
import { commitCut, NO_DELTA, peekDelta } from "./delta.ts";
import type { CommitInvocation } from "./detect.ts";
import { commitFacts } from "./facts.ts";
import type { RedactOptions } from "../../redact/index.ts";
import { redactOptionsFor } from "../config-files.ts";
import { withSessionSecrets } from "../session-secrets.ts";
import { writeFirstVersion } from "./record.ts";
import { storeNewLines } from "./session-store.ts";
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

/**
 * Captures each commit that the git invocations of a shell command really made. `reflogSeen`: the HEAD reflogs as
 * they were before the look, kept in the session's state once it is done.
 */
export async function captureCommits(ctx: HookContext, invocations: CommitInvocation[], reflogSeen: string | null = null): Promise<HookOutput> {
  const repos = new Map<string, { repo: RepoPaths; count: number }>();
  for (const inv of invocations) {
    const repo = findRepo(inv.dir) ?? ctx.repo;
    const seen = repos.get(repo.gitDir);
    if (seen) seen.count++;
    else repos.set(repo.gitDir, { repo, count: 1 });
  }
  const output = [toolOutput(ctx.input.toolResponse), ctx.input.toolError ?? ""].filter(Boolean).join("\n");
  const now = Date.now() / 1000;
  const windowSec = callWindowSec(ctx.input.durationMs, ctx.files, now);
  const made: { repo: RepoPaths; commits: MadeCommit[] }[] = [];
  let budget = MAX_COMMITS_PER_CALL;
  for (const { repo, count } of repos.values()) {
    if (budget <= 0) break;
    let commits = await findNewCommits(repo, {
      now,
      windowSec,
      output,
      max: Math.min(count, budget + 1),
      single: invocations.length === 1,
      isCaptured: async (hash) => (await readEntry(repo, hash)) !== null,
      movedHere: (from, to) => movedByRewrite(repo, from, to),
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

  // the session's secrets found so far are redacted wherever the delta, the entry or the transcript repeats them
  return withSessionSecrets(ctx.files, await redactOptionsFor(ctx.repo.root, ctx.logger), (redact) => captureMade(ctx, made, redact, seen));
}

/**
 * Writes the entries of the commits made and stores the session's new conversation lines. The session's state is
 * written once the first entry holds the delta (its cut, and the commit as pending a summary), and once at the end
 * (the stored transcript's end, the other commits, `also`): twice, where each step wrote it on its own before.
 */
async function captureMade(
  ctx: HookContext,
  made: { repo: RepoPaths; commits: MadeCommit[] }[],
  redact: RedactOptions,
  also: () => Partial<LogState>,
): Promise<HookOutput> {
  const sessionId = ctx.input.sessionId;
  const delta = peekDelta(ctx.files);
  const state = readLogState(ctx.files);
  const captured: { hash: string; subject: string }[] = [];
  const pending = (s: LogState): Partial<LogState> => ({ pending: [...new Set([...s.pending, ...captured.map((c) => c.hash)])].slice(-50) });
  let first = true;
  for (const { repo, commits } of made) {
    const store = new ObjectStore(repo.commonDir);
    try {
      // found through the timeline, so a resumed session (same id, fresh live files) keeps its groups
      let previous = await latestSessionEntry(repo, sessionId, commits[0]!.hash);
      const branch = currentBranch(repo);
      for (const commit of commits) {
        const facts = commitFacts(store, commit.hash);
        const entry = await writeFirstVersion({
          repo,
          facts,
          amendedFrom: commit.amendedFrom,
          sessionId,
          agent: ctx.input.agent,
          branch,
          // the conversation since the last capture belongs to the first commit; later ones of the same
          // command are the agent committing on its own
          delta: first ? delta : NO_DELTA,
          previous,
          redact,
          about: {
            model: ctx.input.model ?? state.model,
            // a resumed session has fresh live files: its earlier entries still say which session it continued
            continuedFrom: state.continuedFrom ?? previous?.continuedFrom,
          },
        });
        previous = entry;
        captured.push({ hash: commit.hash, subject: facts.subject });
        // the delta is taken only once an entry holds it
        if (first) commitCut(ctx.files, delta, pending);
        first = false;
      }
    } finally {
      store.close();
    }
  }
  const last = (s: LogState): Partial<LogState> => ({ ...pending(s), ...also() });
  try {
    await storeNewLines(ctx.files, ctx.repo, sessionId, redact, last);
  } catch (err) {
    // the lines stay in the live log and go with the next store
    updateLogState(ctx.files, last);
    ctx.logger.log("warn", `session transcript not stored: ${(err as Error).message}`, { session: sessionId });
  }
  ctx.logger.log("info", "captured", { session: sessionId, commits: captured.map((c) => c.hash.slice(0, 12)).join(",") });
  const eventName = ctx.input.event === "post-tool-use-failure" ? "PostToolUseFailure" : "PostToolUse";
  return {
    hookSpecificOutput: { hookEventName: eventName, additionalContext: captureReminder(captured) },
  };
}
