import { closeSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describeError } from "../../errors.ts";
import { SESSIONS_REF, TIMELINE_REF, readRef } from "../../store/refs.ts";
import { gitSync } from "../../util/git.ts";
import { startDetachedSelf } from "../../util/self.ts";
import { ensureContextDir, openOwnForAppend } from "../fsutil.ts";
import { createLogger, logFilePath, type Logger } from "../log.ts";
import { findRepo, type RepoPaths } from "../repo.ts";
import type { StdinResult } from "../hook/stdin.ts";

/** One line git writes to a pre-push hook's stdin. */
export interface PushLine {
  localRef: string;
  localSha: string;
  remoteRef: string;
  remoteSha: string;
}

/** aiflare's local-only branches live under this prefix. */
export const AIFLARE_REF_PREFIX = "refs/heads/aiflare/";
const ZERO_RE = /^0+$/;
const SHA_RE = /^[0-9a-f]{40}(?:[0-9a-f]{24})?$/;

/** Parses git's pre-push stdin (`<local ref> <local sha> <remote ref> <remote sha>` per line); ignores junk. */
export function parsePushLines(text: string): PushLine[] {
  const out: PushLine[] = [];
  for (const line of text.split("\n")) {
    const parts = line.trim().split(" ");
    if (parts.length !== 4) continue;
    const [localRef, localSha, remoteRef, remoteSha] = parts as [string, string, string, string];
    if (!SHA_RE.test(localSha) || !SHA_RE.test(remoteSha)) continue;
    out.push({ localRef, localSha, remoteRef, remoteSha });
  }
  return out;
}

const isDeletion = (l: PushLine) => ZERO_RE.test(l.localSha);

/**
 * The refs of a push that would carry aiflare's branches out: a local or remote ref under
 * refs/heads/aiflare/, or any ref pointing at the tip of one (`git push origin <tip>:refs/heads/x`).
 * Deleting such a branch on the remote sends nothing and is allowed, so a leak can be cleaned up.
 */
export function forbiddenRefs(lines: PushLine[], aiflareTips: string[] = []): string[] {
  const tips = new Set(aiflareTips);
  const bad: string[] = [];
  for (const l of lines) {
    if (isDeletion(l)) continue;
    if (l.localRef.startsWith(AIFLARE_REF_PREFIX)) bad.push(l.localRef);
    else if (l.remoteRef.startsWith(AIFLARE_REF_PREFIX)) bad.push(l.remoteRef);
    else if (tips.has(l.localSha)) bad.push(`${l.localRef} (the tip of an aiflare branch)`);
  }
  return [...new Set(bad)];
}

/** The message of the one deliberate refusal: why, and how to push without them. */
export function refusalMessage(remote: string, refs: string[]): string {
  const r = /^[A-Za-z0-9._\/-]+$/.test(remote) ? remote : "<remote>";
  return [
    `aiflare: push refused: ${refs.join(", ")} ${refs.length === 1 ? "is" : "are"} aiflare's local-only data.`,
    "aiflare/timeline/v1 and aiflare/sessions/v1 hold your recorded agent conversations; they never leave this",
    "machine through git (their entries reach your team's backend with `aiflare sync`, run after each push).",
    "Push without them, for example:",
    `  git push ${r} <branch>`,
    `  git push ${r} 'refs/heads/*:refs/heads/*' '^refs/heads/aiflare/*'     # in place of --all`,
    "(--mirror always includes them; name the refs to push instead.)",
  ].join("\n");
}

function revList(root: string, args: string[]): string[] | null {
  const r = gitSync(["rev-list", ...args], { cwd: root });
  if (r.code !== 0) return null;
  return r.stdout.split("\n").filter((l) => l.length > 0);
}

/**
 * The commits a push makes new on the remote: `<new> --not <old>` for an update, `<new> --not
 * --remotes=<remote>` for a new branch (or an old tip this clone lacks); nothing for a deletion.
 */
export function pushedCommits(root: string, remote: string, lines: PushLine[]): string[] {
  const out = new Set<string>();
  const remoteExclude = /^[A-Za-z0-9._\/-]+$/.test(remote) && !remote.includes("..") ? [`--remotes=${remote}`] : [];
  for (const l of lines) {
    if (isDeletion(l)) continue;
    let list: string[] | null = null;
    if (!ZERO_RE.test(l.remoteSha)) list = revList(root, [l.localSha, "--not", l.remoteSha]);
    list ??= revList(root, [l.localSha, "--not", ...remoteExclude]);
    for (const c of list ?? []) out.add(c);
  }
  return [...out];
}

/** Starts `aiflare sync --from-hook <file>` detached, its output going to the log file; returns its pid. */
export function startBackgroundSync(repo: RepoPaths, commitsFile: string, env: Record<string, string | undefined>): number {
  ensureContextDir(repo.root);
  const fd = openOwnForAppend(logFilePath(repo.root));
  try {
    return startDetachedSelf(["sync", "--from-hook", commitsFile], { cwd: repo.root, env, output: fd });
  } finally {
    closeSync(fd);
  }
}

export interface PrePushOptions {
  remote: string;
  url: string;
  stdin: () => Promise<StdinResult>;
  cwd: string;
  env: Record<string, string | undefined>;
  /** replaces the detached start (tests) */
  startSync?: (repo: RepoPaths, commitsFile: string) => number;
}

export interface PrePushResult {
  /** 1 only for the deliberate refusal */
  exitCode: 0 | 1;
  /** what to show the user on stderr */
  message?: string;
  /** commits handed to the background sync */
  commits: number;
}

/**
 * git's pre-push hook: refuses a push of aiflare's branches; otherwise hands the pushed commits to
 * a detached `aiflare sync` and returns at once. Never throws and never fails the push otherwise.
 */
export async function runPrePush(opts: PrePushOptions): Promise<PrePushResult> {
  const repo = findRepo(opts.cwd);
  if (!repo) return { exitCode: 0, commits: 0 };
  const logger: Logger = createLogger({ component: "hook pre-push", root: repo.root });
  try {
    const { text, problem } = await opts.stdin();
    if (problem) {
      logger.log("warn", `stdin not usable (${problem}); nothing checked`);
      return { exitCode: 0, commits: 0 };
    }
    const lines = parsePushLines(text);
    const tips = [TIMELINE_REF, SESSIONS_REF].map((r) => readRef(repo.commonDir, r)).filter((t): t is string => !!t);
    const bad = forbiddenRefs(lines, tips);
    if (bad.length) {
      logger.log("warn", "refused a push of aiflare branches", { refs: bad.join(","), remote: opts.remote });
      return { exitCode: 1, message: refusalMessage(opts.remote, bad), commits: 0 };
    }
    if (tips.length === 0 || lines.length === 0) return { exitCode: 0, commits: 0 };

    // No backend configured: the hook stays silent. Loaded lazily: yaml is only needed here.
    const { loadConfig } = await import("../config.ts");
    const { configProblem, endpointProblem, pushQueueDir } = await import("./settings.ts");
    let configured: boolean;
    try {
      const config = loadConfig(repo.root, opts.env);
      for (const i of config.ignored) logger.log("warn", `setting ignored: ${i.setting} in ${i.from}, since ${i.reason}`);
      configured = configProblem(config) === null;
      const unsafe = configured ? endpointProblem(config) : null;
      if (unsafe) {
        logger.log("warn", `nothing sent: ${unsafe}`);
        configured = false;
      }
    } catch (err) {
      logger.log("warn", `config not usable; pushed entries stay pending (${describeError(err)})`);
      return { exitCode: 0, commits: 0 };
    }
    if (!configured) return { exitCode: 0, commits: 0 };

    const commits = pushedCommits(repo.root, opts.remote, lines);
    if (commits.length === 0) return { exitCode: 0, commits: 0 };
    // The list can be long (a first push); a file carries it where argv could not.
    const dir = pushQueueDir(repo);
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    const file = join(dir, `${Date.now()}-${process.pid}.txt`);
    writeFileSync(file, `${commits.join("\n")}\n`, { mode: 0o600 });
    const pid = (opts.startSync ?? ((r, f) => startBackgroundSync(r, f, opts.env)))(repo, file);
    logger.log("info", "pushed commits handed to background sync", { commits: commits.length, pid, remote: opts.remote });
    return { exitCode: 0, commits: commits.length };
  } catch (err) {
    logger.log("error", `pre-push failed; push goes on: ${describeError(err)}`);
    return { exitCode: 0, commits: 0 };
  }
}
