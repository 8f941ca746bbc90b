/** `aiflare uninstall [--purge]`: takes out exactly what install added; with purge, also the history. */
import { lstatSync, readdirSync, realpathSync, rmSync, rmdirSync } from "node:fs";
import { join, relative, resolve } from "node:path";
import { AiflareError } from "../../errors.ts";
import { SESSIONS_REF, TIMELINE_REF, readRef } from "../../store/refs.ts";
import { gitSync } from "../../util/git.ts";
import { CONTEXT_DIR } from "../session.ts";
import { firstShellWord, shellQuote } from "./binary.ts";
import { planFileUninstall, readText, type Change } from "./files.ts";
import { GIT_HOOKS, gitHooksDir, inspectGitHook, planGitHookUninstall, writableHooksDir } from "./git-hooks.ts";
import { hasCopilotHooks } from "./copilot-hooks.ts";
import { requireRepo } from "./install.ts";
import { OPENCODE_PLUGIN_MARK } from "./opencode-plugin.ts";
import { agentHookFiles, allRules, PATHS } from "./targets.ts";

export interface UninstallOptions {
  cwd: string;
  purge?: boolean;
  dryRun?: boolean;
  /** asked before purging; the command answers from a terminal prompt or `--yes` */
  confirmPurge?: (what: string[]) => Promise<boolean>;
  env?: Record<string, string | undefined>;
  /** the binary of this process, when known: the fallback for files that name none */
  binary?: { quoted: string };
}

export interface UninstallReport {
  root: string;
  dryRun: boolean;
  changes: Change[];
  purged: string[];
  kept: string[];
  /** files git tracks that uninstall changed (with --dry-run: would change), left for the user to commit */
  commit: string[];
  /** the purge was not confirmed: nothing was changed */
  cancelled?: boolean;
}

/**
 * The quoted binary path install used, read back from what it wrote (a hook wrapper or a settings entry),
 * so the "is this exactly what install made?" test holds even after the binary moved.
 */
function installedBinary(root: string, hooksDir: string): string | undefined {
  for (const hook of GIT_HOOKS) {
    const bin = inspectGitHook(hooksDir, hook).binary;
    if (bin) return shellQuote(bin);
  }
  for (const f of agentHookFiles()) {
    const text = readText(join(root, f.rel));
    if (text === null) continue;
    try {
      const cmd = f.audit(text, f.fragmentFor("aiflare"), f.rel).commands[0];
      if (cmd) return shellQuote(firstShellWord(cmd));
    } catch {
      // invalid JSON: the plan reports it
    }
  }
  return undefined;
}

const real = (p: string) => {
  try {
    return realpathSync(p);
  } catch {
    return resolve(p);
  }
};

/**
 * The other worktrees of this repository whose agent hooks still call aiflare. They share the git hooks directory,
 * so removing its hooks there would leave them unprotected (pre-push is what keeps the aiflare branches local).
 */
export function otherInstalledWorktrees(root: string, env?: Record<string, string | undefined>): string[] {
  const r = gitSync(["worktree", "list", "--porcelain"], { cwd: root, env });
  if (r.code !== 0) return [];
  const here = real(root);
  return r.stdout
    .split("\n")
    .filter((l) => l.startsWith("worktree "))
    .map((l) => l.slice("worktree ".length))
    .filter((wt) => real(wt) !== here)
    .filter((wt) =>
      agentHookFiles().some((f) => {
        const text = readText(join(wt, f.rel));
        return text !== null && f.has(text);
      }) ||
      [PATHS.copilotHooks].some((rel) => {
        const text = readText(join(wt, rel));
        return text !== null && hasCopilotHooks(text);
      }) ||
      readText(join(wt, PATHS.opencodePlugin))?.startsWith(OPENCODE_PLUGIN_MARK) === true,
    );
}

/** Removes `.context-capture/` when only its own `.gitignore` is left in it. */
function pruneContextDir(root: string): void {
  const dir = join(root, CONTEXT_DIR);
  try {
    // a symlink in its place leads elsewhere: never list or empty what it points at
    if (!lstatSync(dir).isDirectory()) return;
    const left = readdirSync(dir);
    if (left.length === 1 && left[0] === ".gitignore") {
      rmSync(join(dir, ".gitignore"));
      rmdirSync(dir);
    } else if (left.length === 0) rmdirSync(dir);
  } catch {
    // absent or not removable: nothing to tidy
  }
}

/**
 * The ones of `paths` (absolute, inside `root`) that `git <args> -z -- <paths>` names (ls-files: tracked; diff
 * --name-only: differing from the index), or null when git fails.
 */
function gitNamed(root: string, args: string[], paths: string[], env?: Record<string, string | undefined>): Set<string> | null {
  if (paths.length === 0) return new Set();
  const r = gitSync([...args, "-z", "--", ...paths.map((p) => relative(root, p))], { cwd: root, env });
  return r.code === 0 ? new Set(r.stdout.split("\0").filter(Boolean).map((rel) => join(root, rel))) : null;
}

/** The purge cannot be confirmed (no terminal to ask on, no --yes). */
export function purgeNeedsConfirmation(): AiflareError {
  return new AiflareError(
    "INVALID_ARGUMENT",
    "purge deletes the aiflare branches and index for good; confirm on a terminal or pass --yes. Nothing was changed.",
  );
}

/** Uninstalls aiflare from the repository around `opts.cwd`. */
export async function uninstall(opts: UninstallOptions): Promise<UninstallReport> {
  const repo = requireRepo(opts.cwd);
  const root = repo.root;
  const hooksDir = writableHooksDir(repo, gitHooksDir(root, opts.env));
  const quoted = installedBinary(root, hooksDir) ?? opts.binary?.quoted ?? "aiflare";
  const rules = allRules(root, quoted);
  // a tracked file is never deleted; should git not answer, every file is taken for tracked (none is deleted)
  const paths = rules.map((r) => r.path);
  const tracked = gitNamed(root, ["ls-files"], paths, opts.env) ?? new Set(paths);
  const changes = rules.map((r) => planFileUninstall(root, r, tracked.has(r.path)));
  const sharing = otherInstalledWorktrees(root, opts.env);
  for (const hook of GIT_HOOKS) {
    const plan = planGitHookUninstall(hooksDir, hook);
    if (sharing.length > 0 && plan.run) {
      const others = sharing.length === 1 ? `the worktree ${sharing[0]}` : `${sharing.length} other worktrees (${sharing.join(", ")})`;
      changes.push({ path: plan.path, action: "keep", detail: `git ${hook} hook: shared with ${others}, where aiflare is still installed` });
    } else changes.push(plan);
  }

  const history = [TIMELINE_REF, SESSIONS_REF].filter((ref) => readRef(repo.commonDir, ref) !== null);
  const purgeWhat = [
    ...history.map((r) => `branch ${r.replace("refs/heads/", "")}`),
    `index ${join(repo.commonDir, "aiflare")}`,
    `live session files ${join(root, CONTEXT_DIR)}`,
  ];
  const report: UninstallReport = { root, dryRun: opts.dryRun ?? false, changes, purged: [], kept: [], commit: [] };
  const trackedChanges = changes.filter((c) => c.tracked && c.run).map((c) => c.path);
  if (opts.purge && !report.dryRun) {
    if (!opts.confirmPurge) throw purgeNeedsConfirmation();
    if (!(await opts.confirmPurge(purgeWhat))) return { ...report, changes: [], cancelled: true };
  }
  if (report.dryRun) {
    report.commit = trackedChanges;
    if (opts.purge) report.purged = purgeWhat;
    else report.kept = history.map((r) => r.replace("refs/heads/", ""));
    return report;
  }
  for (const c of changes) c.run?.();
  const modified = gitNamed(root, ["diff", "--name-only"], trackedChanges, opts.env);
  report.commit = modified ? trackedChanges.filter((p) => modified.has(p)) : trackedChanges;
  if (opts.purge) {
    for (const ref of history) {
      const r = gitSync(["update-ref", "-d", ref], { cwd: root, env: opts.env });
      if (r.code !== 0) throw new AiflareError("GIT", `could not delete ${ref}: ${r.stderr.trim()}`);
    }
    rmSync(join(repo.commonDir, "aiflare"), { recursive: true, force: true });
    rmSync(join(root, CONTEXT_DIR), { recursive: true, force: true });
    report.purged = purgeWhat;
  } else {
    report.kept = history.map((r) => r.replace("refs/heads/", ""));
    pruneContextDir(root);
  }
  return report;
}
