/**
 * Recall at `session-start`: the context added when a session starts, and the handoff across `/clear` (saved at
 * the old session's end, read at the new one's start). Loaded by a dynamic import from the event handlers; SQLite
 * only when the repository has a timeline to read.
 */
import { readdirSync, rmSync, statSync } from "node:fs";
import { join } from "node:path";
import { readRef, TIMELINE_REF } from "../../store/refs.ts";
import { conversationLines } from "../../util/jsonl.ts";
import { startDetachedSelf } from "../../util/self.ts";
import { isValidSessionId } from "../../util/ids.ts";
import { recallWithoutFiles } from "../config-files.ts";
import { readOwnFile, writeOwnFile } from "../fsutil.ts";
import type { HookContext, HookOutput } from "../hook/types.ts";
import { findRepo, type RepoPaths } from "../repo.ts";
import { readLogFrom, readLogState, rememberSession } from "../session-log.ts";
import { sessionFiles, type AgentName, type SessionFiles } from "../session.ts";
import type { Handoff } from "./format.ts";
import { currentBranch, hasStartCache, mayHaveTeam, savedForKey, startKey, startOutput, writeStartCache } from "./start-cache.ts";

/** The session-start budget (SPEC §11) and the handoff's. */
const START_MAX = 1000;
const HANDOFF_MAX = 2000;
/** A handoff older than this belongs to some other, long-gone session. */
const HANDOFF_MAX_AGE_MS = 30 * 60 * 1000;
/** Longest text kept of a prompt or reply in the handoff file (the block cuts it further). */
const KEEP = 2000;

/**
 * SessionStart: the latest recorded work of the branch and commits of earlier sessions still waiting for a
 * summary; after `/clear`, first the handoff of the session that was cleared. Returns undefined when there
 * is nothing to say.
 */
export async function sessionStartRecall(ctx: HookContext): Promise<HookOutput> {
  // the session /clear continued is recorded in this session's entries whether or not recall is on
  const previous = ctx.input.source === "clear" ? takeHandoff(ctx.repo.root, ctx.input.agent, ctx.input.sessionId) : undefined;
  if (previous) rememberSession(ctx.files, { continuedFrom: previous.sessionId });
  const settings = recallWithoutFiles(ctx.repo.root, ctx.env) ?? (await import("../config.ts")).loadRecallSettings(ctx.repo.root, ctx.env);
  if (!settings.sessionStart) return undefined;
  // After a compaction the context no longer holds what recall said before: say it again at the next edit.
  if (ctx.input.source === "compact") rmSync(ctx.files.recall, { force: true });
  const branch = currentBranch(ctx.repo.gitDir);
  const team = mayHaveTeam(ctx.repo, ctx.env);
  const tip = readRef(ctx.repo.commonDir, TIMELINE_REF);
  // Without a handoff or a team, the answer is saved for the next start on the same state (start-cache.ts).
  const key = !previous && !team && tip ? { branch, tip } : undefined;
  const found = await startEntries(ctx, branch, previous?.sessionId, team, tip);
  if (!previous && !found) return undefined;
  const { handoffContext, sessionStartContext } = await import("./format.ts");
  const parts: string[] = [];
  if (previous) {
    const changedFiles = await uncommittedFiles(ctx.repo.root);
    // One budget for both: the commits awaiting a summary take what they need, the handoff the rest.
    const pending = found?.pending.length ? sessionStartContext(branch || "(detached HEAD)", [], found.pending, START_MAX / 2) : "";
    parts.push(handoffContext({ ...previous, changedFiles, entries: found?.previousEntries ?? [] }, HANDOFF_MAX - pending.length - 2), pending);
  } else if (found) {
    parts.push(sessionStartContext(branch || "(detached HEAD)", found.latest, found.pending, START_MAX));
  }
  const text = parts.filter(Boolean).join("\n\n");
  // saved only when the index was read at the tip the key names, and the text holds for this session
  if (key && found?.owners && readRef(ctx.repo.commonDir, TIMELINE_REF) === tip) writeStartCache(ctx.repo.commonDir, key, found.owners, text);
  return startOutput(text);
}

/** The hidden command that saves the next session start's answer in the background (src/main.ts). */
export const REFRESH_ARG = "__recall-start";

/**
 * After the timeline moved (a summary written by `aiflare capture`): starts a detached `aiflare __recall-start` that
 * saves the next session start's answer, so that start reads it instead of refreshing the index and computing it,
 * and the command that moved the timeline does not wait for either. Only where an answer was saved before
 * (session-start recall is in use) and may be saved now.
 */
export function refreshStartAnswerLater(cwd: string, env: Record<string, string | undefined>): void {
  const repo = findRepo(cwd);
  if (!repo || !hasStartCache(repo.commonDir) || !startKey(repo, env)) return;
  startDetachedSelf([REFRESH_ARG], { cwd: repo.root, env });
}

/** The background side of `refreshStartAnswerLater`: the answer computed as for a session of no waiting commit, and saved. */
export async function refreshStartAnswer(cwd: string, env: Record<string, string | undefined>): Promise<void> {
  const repo = findRepo(cwd);
  const key = repo && hasStartCache(repo.commonDir) ? startKey(repo, env) : undefined;
  // saved for this very state already (after a session's end, when a capture saved it before)
  if (!repo || !key || savedForKey(repo.commonDir, key)) return;
  const found = await localStartEntries(repo, env, NO_SESSION, key.branch, undefined, []);
  if (!found?.owners) return;
  const { sessionStartContext } = await import("./format.ts");
  const text = sessionStartContext(key.branch || "(detached HEAD)", found.latest, found.pending, START_MAX);
  if (readRef(repo.commonDir, TIMELINE_REF) === key.tip) writeStartCache(repo.commonDir, key, found.owners, text);
}

/**
 * The entries a session start names: the branch's latest (this clone's and, where a team cache or backend is set
 * up, the team's of the branch's recent commits), other sessions' commits still without a summary, and those of
 * the session continued after `/clear`. Null when there is nothing: without a timeline or team, SQLite and the
 * index readers are not loaded at all. `owners` (this clone's entries only): the sessions of the first two commits
 * of any session still waiting for a summary, when none of them is this session's; the same text then holds for
 * every session but those (start-cache.ts).
 */
async function startEntries(ctx: HookContext, branch: string, previousSession: string | undefined, team: boolean, tip: string | null) {
  const commits = team ? await (await import("./team-start.ts")).recentCommits(ctx.repo.root) : [];
  const local = tip ? await localStartEntries(ctx.repo, ctx.env, ctx.input.sessionId, branch, previousSession, commits) : null;
  if (!team) return local;
  const own = new Set(local?.own ?? []);
  const { teamStartEntries } = await import("./team-start.ts");
  const theirs = await teamStartEntries(ctx.repo, ctx.env, commits.filter((h) => !own.has(h)), START_LATEST);
  if (theirs.length === 0) return local;
  const seen = new Set<string>();
  const latest = [...(local?.latest ?? []), ...theirs]
    .filter((e) => !seen.has(e.commitHash) && !!seen.add(e.commitHash))
    .sort((a, b) => (Date.parse(b.date) || 0) - (Date.parse(a.date) || 0))
    .slice(0, START_LATEST);
  return { latest, pending: local?.pending ?? [], previousEntries: local?.previousEntries ?? [], owners: undefined };
}

/** How many of the branch's latest entries a session start names. */
const START_LATEST = 3;

/** No session id holds a slash (isValidSessionId): waiting commits "of other sessions than this" are then all of them. */
const NO_SESSION = "/";

/** This clone's entries from the index for a start of `sessionId`; `own`: which of `commits` have one. */
async function localStartEntries(
  repo: RepoPaths,
  env: Record<string, string | undefined>,
  sessionId: string,
  branch: string,
  previousSession: string | undefined,
  commits: string[],
) {
  const [{ readRecallIndex }, index] = await Promise.all([import("./index-access.ts"), import("../../store/index/recall.ts")]);
  return readRecallIndex(repo, env, (db) => {
    // The first waiting commits of any session are this session's too unless one of them is its own.
    const anyPending = index.pendingEntriesOfOtherSessions(db, NO_SESSION, 2);
    const owners = anyPending.map((e) => e.sessionId);
    const mine = owners.includes(sessionId);
    return {
      latest: branch ? index.latestEntriesOnBranch(db, branch, START_LATEST) : [],
      pending: mine ? index.pendingEntriesOfOtherSessions(db, sessionId, 2) : anyPending,
      previousEntries: previousSession ? index.latestEntriesOfSession(db, previousSession, 3) : [],
      own: index.commitsWithEntries(db, commits),
      owners: mine ? undefined : owners,
    };
  });
}

/** Where a session cleared with `/clear` leaves its open request for the next one. */
function handoffPath(root: string, agent: AgentName): string {
  return join(root, ".context-capture", `.recall-handoff-${agent}`);
}

type SavedHandoff = Pick<Handoff, "sessionId" | "lastPrompt" | "lastReply">;

/** The open request of a live conversation log: the last typed prompt and the last reply after the last commit. */
function openRequest(sessionId: string, files: Pick<SessionFiles, "prompts" | "offset">): SavedHandoff | undefined {
  const all = conversationLines(readLogFrom(files.prompts, 0).text);
  if (all.length === 0) return undefined;
  // `cut`: the bytes of the log already given to an entry, i.e. up to the last commit
  const after = conversationLines(readLogFrom(files.prompts, readLogState(files).cut).text);
  const lastPrompt = all.findLast((l) => l.role === "user")?.content;
  const lastReply = after.findLast((l) => l.role === "assistant")?.content;
  if (!lastPrompt && !lastReply) return undefined;
  return { sessionId, lastPrompt: lastPrompt?.slice(0, KEEP), lastReply: lastReply?.slice(0, KEEP) };
}

/** SessionEnd with reason `clear`: keeps the open request for the session `/clear` starts next. */
export function saveHandoff(ctx: HookContext): void {
  if (ctx.input.reason !== "clear") return;
  try {
    const saved = openRequest(ctx.input.sessionId, ctx.files);
    if (!saved) return;
    writeOwnFile(handoffPath(ctx.repo.root, ctx.input.agent), JSON.stringify({ ...saved, at: Date.now() }));
  } catch (err) {
    // The session's own storing comes next and must not depend on this.
    ctx.logger.log("warn", `recall: the /clear handoff was not saved (${(err as Error).message})`);
  }
}

/**
 * The open request of the session this one continues after `/clear`: the handoff its SessionEnd saved, else
 * (Codex, which has no SessionEnd) the most recently written other conversation log of the same agent.
 */
function takeHandoff(root: string, agent: AgentName, currentId: string): SavedHandoff | undefined {
  const file = handoffPath(root, agent);
  try {
    const saved = JSON.parse(readOwnFile(file) ?? "") as SavedHandoff & { at?: number };
    rmSync(file, { force: true });
    if (
      isValidSessionId(saved.sessionId) &&
      saved.sessionId !== currentId &&
      typeof saved.at === "number" &&
      Date.now() - saved.at < HANDOFF_MAX_AGE_MS
    ) {
      return {
        sessionId: saved.sessionId,
        lastPrompt: typeof saved.lastPrompt === "string" ? saved.lastPrompt : undefined,
        lastReply: typeof saved.lastReply === "string" ? saved.lastReply : undefined,
      };
    }
  } catch {
    // no handoff saved
  }
  // Claude Code's SessionEnd saves the handoff; only an agent without one is handed the newest other live log.
  if (agent !== "codex") return undefined;
  const dir = join(root, ".context-capture");
  const prefix = `.${agent}-prompts-`;
  let best: { id: string; mtime: number } | undefined;
  try {
    for (const name of readdirSync(dir)) {
      if (!name.startsWith(prefix)) continue;
      const id = name.slice(prefix.length);
      if (id === currentId || !isValidSessionId(id)) continue;
      const mtime = statSync(join(dir, name)).mtimeMs;
      if (Date.now() - mtime < HANDOFF_MAX_AGE_MS && (!best || mtime > best.mtime)) best = { id, mtime };
    }
  } catch {
    return undefined;
  }
  if (!best) return undefined;
  return openRequest(best.id, sessionFiles(root, agent, best.id));
}

/** Paths with uncommitted changes (staged, unstaged or new), as `git status` lists them. */
async function uncommittedFiles(root: string): Promise<string[]> {
  const { execGit } = await import("../../util/git.ts");
  const r = await execGit(["status", "--porcelain=v1", "-z", "--untracked-files=normal"], { cwd: root, timeoutMs: 2000 });
  if (r.code !== 0) return [];
  const parts = new TextDecoder().decode(r.stdout).split("\0");
  const out: string[] = [];
  for (let i = 0; i < parts.length; i++) {
    const rec = parts[i]!;
    if (rec.length < 4) continue;
    out.push(rec.slice(3));
    if (rec[0] === "R" || rec[0] === "C") i++; // the old name follows
  }
  return out.filter((p) => !p.startsWith(".context-capture/"));
}
