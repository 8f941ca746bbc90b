/**
 * The last session-start answer, kept beside the index (`<common dir>/aiflare/recall-start.json`) with what it was
 * computed from, so that the next session start on the same state reads one small file instead of loading SQLite,
 * the index queries and the entries' objects. Used only where the answer depends on nothing else: no `/clear`
 * handoff, no team cache, backend or settings file (recall's settings are then the defaults).
 *
 * What the text depends on, and so the key: the branch checked out, and the timeline's tip (every entry, summary and
 * rewritten entry moves it; the index is a function of it). The commits still waiting for a summary are those of
 * sessions other than the one starting: the file names the sessions of the first two such commits of any session,
 * and the text is good for every session but those. Dates are printed as days, never relative to now.
 */
import { existsSync, rmSync } from "node:fs";
import { join } from "node:path";
import { readHead, readRef, TIMELINE_REF } from "../../store/refs.ts";
import { CONFIG_FILE, recallOffByEnv, userConfigPath } from "../config-files.ts";
import { atomicWrite, readOwnFile } from "../fsutil.ts";
import type { HookContext, HookOutput } from "../hook/types.ts";
import type { RepoPaths } from "../repo.ts";

/** Bumped whenever the text or what it depends on changes shape: an older file is then recomputed. */
const FORMAT = 1;

/** What the saved answer was computed from. */
export interface StartKey {
  /** the branch checked out; "" when detached */
  branch: string;
  /** the timeline's tip */
  tip: string;
}

interface Saved extends StartKey {
  v: number;
  /** sessions whose own waiting commits the text would leave out for them */
  owners: string[];
  text: string;
}

type Env = Record<string, string | undefined>;

/** The branch checked out in this worktree; "" when detached. */
export function currentBranch(gitDir: string): string {
  const head = readHead(gitDir);
  return head.startsWith("ref: refs/heads/") ? head.slice("ref: refs/heads/".length) : "";
}

/**
 * A team cache (`aiflare pull`, lookups) or a backend that may be configured: only then is the team asked. Also
 * true whenever a settings file exists, so without it recall's settings are the defaults.
 */
export function mayHaveTeam(repo: Pick<RepoPaths, "root" | "commonDir">, env: Env): boolean {
  return (
    existsSync(join(repo.commonDir, "aiflare", "team.sqlite")) ||
    !!env.AIFLARE_ENDPOINT ||
    existsSync(join(repo.root, CONFIG_FILE)) ||
    existsSync(userConfigPath(env))
  );
}

/**
 * What a session start's answer depends on, when it may be saved: recall on, no team or settings file, a timeline.
 * Undefined otherwise.
 */
export function startKey(repo: Pick<RepoPaths, "root" | "commonDir" | "gitDir">, env: Env): StartKey | undefined {
  if (recallOffByEnv(env) || mayHaveTeam(repo, env)) return undefined;
  const tip = readRef(repo.commonDir, TIMELINE_REF);
  return tip ? { branch: currentBranch(repo.gitDir), tip } : undefined;
}

/** The hook's answer carrying `text`; none for "". */
export function startOutput(text: string): HookOutput {
  return text ? { hookSpecificOutput: { hookEventName: "SessionStart", additionalContext: text } } : undefined;
}

/**
 * The saved answer of a session start, when one holds for this start: what the hook answers without loading the
 * recall code. Undefined: compute it (session-start.ts). After `/clear` there may be a handoff: always computed.
 */
export function savedStartAnswer(ctx: HookContext): { output: HookOutput } | undefined {
  if (ctx.input.source === "clear") return undefined;
  const key = startKey(ctx.repo, ctx.env);
  const text = key && readStartCache(ctx.repo.commonDir, key, ctx.input.sessionId);
  if (text === undefined) return undefined;
  // After a compaction the context no longer holds what recall said before: say it again at the next edit.
  if (ctx.input.source === "compact") rmSync(ctx.files.recall, { force: true });
  return { output: startOutput(text) };
}

function cachePath(commonDir: string): string {
  return join(commonDir, "aiflare", "recall-start.json");
}

/** True when a session-start answer was saved here (whatever it holds). */
export function hasStartCache(commonDir: string): boolean {
  return existsSync(cachePath(commonDir));
}

/** The saved answer when it was computed for `key` (whichever sessions it leaves out); null when none was. */
function savedFor(commonDir: string, key: StartKey): Saved | null {
  let saved: Partial<Saved> | null;
  try {
    saved = JSON.parse(readOwnFile(cachePath(commonDir)) ?? "null") as Partial<Saved> | null;
  } catch {
    return null;
  }
  if (!saved || saved.v !== FORMAT || saved.branch !== key.branch || saved.tip !== key.tip) return null;
  return typeof saved.text === "string" && Array.isArray(saved.owners) ? (saved as Saved) : null;
}

/** True when the saved answer was computed for `key`. */
export function savedForKey(commonDir: string, key: StartKey): boolean {
  return savedFor(commonDir, key) !== null;
}

/** The saved text for `key` when it holds for `sessionId` ("" is a saved "nothing to say"); undefined when it does not. */
function readStartCache(commonDir: string, key: StartKey, sessionId: string): string | undefined {
  const saved = savedFor(commonDir, key);
  if (!saved) return undefined;
  for (const owner of saved.owners) if (owner === sessionId) return undefined;
  return saved.text;
}

/** Saves a computed answer; a failure only costs the next session start the computing. */
export function writeStartCache(commonDir: string, key: StartKey, owners: string[], text: string): void {
  const saved: Saved = { v: FORMAT, branch: key.branch, tip: key.tip, owners, text };
  try {
    atomicWrite(cachePath(commonDir), JSON.stringify(saved), 0o600);
  } catch {
    // an unwritable git dir: recomputed each time, as before
  }
}
