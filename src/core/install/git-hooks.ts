/**
 * aiflare's git hooks (pre-push, post-rewrite, post-merge) in the hooks directory git really uses. A hook that is
 * already there is moved aside to `<hook>.aiflare-chained` and run first by aiflare's wrapper; uninstall
 * moves it back (a rename: same bytes, same mode).
 */
import { existsSync, renameSync, rmSync } from "node:fs";
import { isAbsolute, join, resolve } from "node:path";
import { AiflareError } from "../../errors.ts";
import { gitSync } from "../../util/git.ts";
import { firstShellWord } from "./binary.ts";
import { atomicWrite, isExecutableFile, resolveTarget } from "../fsutil.ts";
import type { RepoPaths } from "../repo.ts";
import { readText, type Change } from "./files.ts";
import { GIT_HOOK_MARKER, gitHookText } from "./templates.ts";

/** The git hooks aiflare installs. */
export const GIT_HOOKS = ["pre-push", "post-rewrite", "post-merge"] as const;
export type GitHookName = (typeof GIT_HOOKS)[number];

/** A hook that was there before aiflare's is kept under its name with this suffix, and still runs first. */
export const CHAINED_SUFFIX = ".aiflare-chained";

/** The hooks directory git uses for the repository at `cwd` (`core.hooksPath` respected), absolute. */
export function gitHooksDir(cwd: string, env: Record<string, string | undefined> = process.env): string {
  const r = gitSync(["rev-parse", "--git-path", "hooks"], { cwd, env });
  if (r.code !== 0) throw new AiflareError("GIT", `git rev-parse --git-path hooks failed: ${r.stderr.trim()}`);
  const out = r.stdout.trim();
  return isAbsolute(out) ? out : resolve(cwd, out);
}

/**
 * The real hooks directory install and uninstall may write in: it must lie inside the repository or its git
 * directory. A `core.hooksPath` (or a linked hooks directory) elsewhere is shared with other repositories, so
 * aiflare refuses to put its hooks there.
 */
export function writableHooksDir(repo: RepoPaths, hooksDir: string): string {
  resolveTarget(hooksDir, { inside: [repo.root, repo.gitDir, repo.commonDir], label: "this repository and its git directory" }, repo.root);
  return hooksDir;
}

/** True when `text` is aiflare's wrapper. */
export function isAiflareGitHook(text: string | null): boolean {
  return text !== null && text.includes(GIT_HOOK_MARKER);
}

/** The binary path an installed wrapper calls (its `AIFLARE_BIN=` line), unquoted. */
export function wrapperBinary(text: string): string | undefined {
  const m = /^AIFLARE_BIN=(.*)$/m.exec(text);
  if (!m?.[1]) return undefined;
  return firstShellWord(m[1]);
}

/** Plans install of one git hook wrapper. Throws CONFLICT when a foreign hook and a different chained one both exist. */
export function planGitHookInstall(hooksDir: string, hook: GitHookName, binQuoted: string): Change {
  const path = join(hooksDir, hook);
  const chained = path + CHAINED_SUFFIX;
  const current = readText(path);
  const wanted = gitHookText(hook, binQuoted);
  if (isAiflareGitHook(current)) {
    if (current === wanted && isExecutableFile(path)) return { path, action: "unchanged", detail: `git ${hook} hook` };
    return { path, action: "update", detail: `git ${hook} hook`, run: () => atomicWrite(path, wanted, 0o755) };
  }
  if (current === null) {
    return { path, action: "create", detail: `git ${hook} hook`, run: () => atomicWrite(path, wanted, 0o755) };
  }
  const chainedText = readText(chained);
  if (chainedText !== null && chainedText !== current) {
    throw new AiflareError(
      "CONFLICT",
      `${path} is not aiflare's, and ${chained} (a hook aiflare chained earlier) differs from it. ` +
        `Keep one of them (move the other away), then run aiflare install again; nothing was changed.`,
    );
  }
  return {
    path,
    action: "update",
    detail: `git ${hook} hook (your existing hook is kept as ${hook}${CHAINED_SUFFIX} and still runs first)`,
    run() {
      if (chainedText === null) renameSync(path, chained);
      else rmSync(path, { force: true }); // the same bytes are already kept as the chained hook
      atomicWrite(path, wanted, 0o755);
    },
  };
}

/** Plans uninstall of one git hook: remove the wrapper, move a chained hook back to its place. */
export function planGitHookUninstall(hooksDir: string, hook: GitHookName): Change {
  const path = join(hooksDir, hook);
  const chained = path + CHAINED_SUFFIX;
  const current = readText(path);
  const hasChained = existsSync(chained);
  if (!isAiflareGitHook(current)) {
    if (hasChained && current !== null && readText(chained) === current) {
      // Something (e.g. husky) rewrote the hook with what aiflare had chained: drop the duplicate.
      return { path: chained, action: "delete", detail: `duplicate of ${hook}`, run: () => rmSync(chained, { force: true }) };
    }
    if (hasChained) {
      return {
        path: chained,
        action: "keep",
        detail: `${hook} is no longer aiflare's; ${hook}${CHAINED_SUFFIX} left for you to sort out`,
      };
    }
    return { path, action: "unchanged", detail: `git ${hook} hook: not aiflare's`, absent: current === null };
  }
  if (hasChained) {
    return {
      path,
      action: "restore",
      detail: `git ${hook} hook: your previous hook put back`,
      run() {
        rmSync(path, { force: true });
        renameSync(chained, path);
      },
    };
  }
  return { path, action: "delete", detail: `git ${hook} hook`, run: () => rmSync(path, { force: true }) };
}

/** State of one installed git hook, for doctor. */
export interface GitHookState {
  hook: GitHookName;
  path: string;
  present: boolean;
  ours: boolean;
  executable: boolean;
  binary?: string;
  chained?: { path: string; executable: boolean };
}

/** What is installed as `hook` in `hooksDir`: whether it is aiflare's wrapper, runnable, and what it chains. */
export function inspectGitHook(hooksDir: string, hook: GitHookName): GitHookState {
  const path = join(hooksDir, hook);
  const text = readText(path);
  const chained = path + CHAINED_SUFFIX;
  return {
    hook,
    path,
    present: text !== null,
    ours: isAiflareGitHook(text),
    executable: text !== null && isExecutableFile(path),
    binary: text !== null && isAiflareGitHook(text) ? wrapperBinary(text) : undefined,
    chained: existsSync(chained) ? { path: chained, executable: isExecutableFile(chained) } : undefined,
  };
}
