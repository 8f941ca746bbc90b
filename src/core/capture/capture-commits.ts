import { existsSync, rmSync } from "node:fs";
import { readOwnFile } from "../fsutil.ts";
import { ObjectStore } from "../../store/objects.ts";
import { latestSessionEntry, movedByRewrite, readEntry, writeSession } from "../../store/timeline.ts";
import type { HookContext, HookOutput } from "../hook/types.ts";
import { findRepo, type RepoPaths } from "../repo.ts";
import { cutDelta, type Delta } from "./delta.ts";
import type { CommitInvocation } from "./detect.ts";
import { commitFacts } from "./facts.ts";
import type { RedactOptions } from "../../redact/index.ts";
import { redactOptionsFor } from "../redact.ts";
import { writeFirstVersion } from "./record.ts";
import { currentBranch, findNewCommits, toolOutput, type MadeCommit } from "./verify.ts";

/** A commit counts as made by the command when its reflog line is at most this old (the Bash tool's longest run). */
export const COMMIT_WINDOW_SEC = 11 * 60;

const NO_DELTA: Delta = { text: "", hasUser: false, lines: 0 };

function contextMessage(commits: { hash: string; subject: string }[]): string {
  const list = commits.map((c) => `${c.hash} ("${c.subject.slice(0, 100)}")`).join(", ");
  const hashes = commits.map((c) => c.hash).join(" ");
  return (
    `aiflare recorded ${commits.length === 1 ? "commit" : "commits"} ${list} on its timeline. ` +
    `Now run the context-capture skill for commit ${hashes}: write why the change was made ` +
    `(title, intent, alternatives, diff summary, tag) and save it with \`aiflare capture --commit-hash <hash> …\`.`
  );
}

/** Captures each commit that the `git commit` invocations of a shell command really made. */
export async function captureCommits(ctx: HookContext, invocations: CommitInvocation[]): Promise<HookOutput> {
  const repos = new Map<string, { repo: RepoPaths; count: number }>();
  for (const inv of invocations) {
    const repo = findRepo(inv.dir) ?? ctx.repo;
    const seen = repos.get(repo.gitDir);
    if (seen) seen.count++;
    else repos.set(repo.gitDir, { repo, count: 1 });
  }
  const output = toolOutput(ctx.input.toolResponse);
  const now = Date.now() / 1000;
  const made: { repo: RepoPaths; commits: MadeCommit[] }[] = [];
  for (const { repo, count } of repos.values()) {
    const commits = await findNewCommits(repo, {
      now,
      windowSec: COMMIT_WINDOW_SEC,
      output,
      max: count,
      single: invocations.length === 1,
      isCaptured: async (hash) => (await readEntry(repo, hash)) !== null,
      movedHere: (from, to) => movedByRewrite(repo, from, to),
    });
    if (commits.length) made.push({ repo, commits });
  }
  if (made.length === 0) {
    ctx.logger.log("info", "git commit in command but no new commit found", { session: ctx.input.sessionId });
    return undefined;
  }

  const sessionId = ctx.input.sessionId;
  const redact = redactOptionsFor(ctx.repo.root, ctx.logger);
  // no offset file yet: this session has captured nothing since it started, so it has no previous entry
  const sessionHasEntries = existsSync(ctx.files.offset);
  const delta = cutDelta(ctx.files);
  const continuation = existsSync(ctx.files.pendingQuestion);
  const captured: { hash: string; subject: string }[] = [];
  let first = true;
  for (const { repo, commits } of made) {
    const store = new ObjectStore(repo.commonDir);
    try {
      let previous = sessionHasEntries ? await latestSessionEntry(repo, sessionId, commits[0]!.hash) : null;
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
          continuation: first ? continuation : false,
          previous,
          redact,
        });
        if (first) rmSync(ctx.files.pendingQuestion, { force: true });
        first = false;
        previous = entry;
        captured.push({ hash: commit.hash, subject: facts.subject });
      }
    } finally {
      store.close();
    }
    await storeTranscript(ctx, repo, redact);
  }
  ctx.logger.log("info", "captured", { session: sessionId, commits: captured.map((c) => c.hash.slice(0, 12)).join(",") });
  return {
    hookSpecificOutput: { hookEventName: "PostToolUse", additionalContext: contextMessage(captured) },
  };
}

async function storeTranscript(ctx: HookContext, repo: RepoPaths, redact: RedactOptions): Promise<void> {
  const text = readOwnFile(ctx.files.prompts);
  if (text === null || !text.trim()) return;
  await writeSession(repo, ctx.input.sessionId, text, { redact });
}

/** Stores the session's redacted conversation on `aiflare/sessions/v1`. */
export async function storeSessionTranscript(ctx: HookContext): Promise<void> {
  await storeTranscript(ctx, ctx.repo, redactOptionsFor(ctx.repo.root, ctx.logger));
}
