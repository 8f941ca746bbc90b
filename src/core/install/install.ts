/** `aiflare install`: plan every change first (so a problem stops it before anything is written), then apply. */
import { existsSync } from "node:fs";
import { join, relative } from "node:path";
import { AiflareError } from "../../errors.ts";
import { stableCommandBinary } from "./binary.ts";
import { gitSync } from "../../util/git.ts";
import { CONFIG_FILE } from "../config.ts";
import { findRepo, type RepoPaths } from "../repo.ts";
import { planFileInstall, type Change } from "./files.ts";
import { GIT_HOOKS, gitHooksDir, planGitHookInstall, writableHooksDir } from "./git-hooks.ts";
import { mcpRule } from "./mcp-json.ts";
import { recallState } from "./recall-state.ts";
import { installRules, installs, PATHS, type InstallAgent } from "./targets.ts";

export interface InstallOptions {
  cwd: string;
  agent: InstallAgent;
  /** write `.claude/settings.json` (shared with the team) instead of `settings.local.json` */
  shared?: boolean;
  /** also register `aiflare mcp` in the project's `.mcp.json` */
  mcp?: boolean;
  dryRun?: boolean;
  /** the binary hooks call: absolute path and its shell-quoted form */
  binary: { bin: string; quoted: string };
  env?: Record<string, string | undefined>;
  /** Factory Droid: add aiflare's hooks to the user's ~/.factory/settings.json (only on the user's explicit request) */
  factoryUserSettings?: boolean;
  /** record the approval of aiflare's Codex hooks in the user's Codex config (only on the user's explicit request) */
  approveCodexHooks?: boolean;
}

export interface InstallReport {
  root: string;
  dryRun: boolean;
  changes: Change[];
  warnings: string[];
  next: string[];
  /** what recall is set to, one line */
  recall: string;
}

/** Finds the repository around `cwd`, or says how to get into one. */
export function requireRepo(cwd: string): RepoPaths {
  const repo = findRepo(cwd);
  if (!repo) throw new AiflareError("NOT_A_REPO", `${cwd} is not inside a git repository; run this in the repository to set up.`);
  return repo;
}

/** Files among `paths` that git tracks (their edits will show in `git status`). */
function trackedAmong(root: string, paths: string[], env?: Record<string, string | undefined>): Set<string> {
  const inside = paths.filter((p) => !relative(root, p).startsWith(".."));
  if (inside.length === 0) return new Set();
  const r = gitSync(["ls-files", "-z", "--", ...inside.map((p) => relative(root, p))], { cwd: root, env });
  const listed = r.stdout.split("\0").filter(Boolean);
  return new Set(listed.map((l) => join(root, l)));
}

/** Computes what install would do, writing nothing. Throws when a file cannot be merged safely. */
export function planInstall(opts: InstallOptions): InstallReport {
  const repo = requireRepo(opts.cwd);
  const root = repo.root;
  const quoted = opts.binary.quoted;
  const shared = opts.shared ?? false;
  const claude = installs(opts.agent, "claude");
  const codex = installs(opts.agent, "codex");
  const createsSettingsLocal = !shared && claude && !existsSync(join(root, PATHS.claudeLocal));
  const ignoreSettingsLocal =
    createsSettingsLocal && gitSync(["check-ignore", "-q", "--no-index", PATHS.claudeLocal], { cwd: root, env: opts.env }).code !== 0;
  const geminiBin = stableCommandBinary(opts.binary, (opts.env ?? process.env).PATH);
  const changes: Change[] = installRules(root, quoted, opts.agent, shared, ignoreSettingsLocal, geminiBin, opts.binary.bin).map((r) =>
    planFileInstall(root, r),
  );
  if (opts.mcp) changes.push(planFileInstall(root, mcpRule(root, opts.binary.bin)));
  const hooksDir = writableHooksDir(repo, gitHooksDir(root, opts.env));
  for (const hook of GIT_HOOKS) changes.push(planGitHookInstall(hooksDir, hook, quoted));

  const warnings: string[] = [];
  const tracked = trackedAmong(root, changes.filter((c) => c.run && c.path.startsWith(hooksDir)).map((c) => c.path), opts.env);
  for (const p of tracked) warnings.push(`${relative(root, p)} is tracked by git: replacing it shows in git status.`);

  const env = opts.env ?? process.env;
  const next: string[] = [];
  if (!existsSync(join(root, CONFIG_FILE)) && !env.AIFLARE_API_KEY) {
    next.push(
      `To send history to your aiflare backend on git push, create ${CONFIG_FILE} at the repository root with ` +
        "`api_key:` and `endpoint:` (it is git-ignored), or set AIFLARE_API_KEY and AIFLARE_ENDPOINT.",
    );
  }
  if (claude) {
    next.push("Start a new Claude Code session in this repository (or open /hooks) so it loads the hooks.");
  }
  if (installs(opts.agent, "cursor")) {
    next.push(
      "Cursor loads .cursor/hooks.json when it starts (restart it, or run a new `agent` session). Cursor also runs " +
        "Claude Code's hooks from .claude/settings*.json: aiflare records those calls as Cursor's once, whichever file fires.",
    );
  }
  if (installs(opts.agent, "qwen")) {
    next.push(
      `Start a new Qwen Code session in this repository so it loads ${PATHS.qwenSettings}; its agent saves the why with ` +
        "`aiflare capture`, which finds the session through QWEN_CODE_SESSION_ID.",
    );
  }
  if (codex && !opts.approveCodexHooks) {
    next.push(
      "Codex runs these hooks only once you approve them, and `codex exec` skips unapproved hooks without a word: " +
        "start `codex` in this repository and accept \"Hooks need review\" (or open /hooks), or run " +
        "`aiflare install --agent codex --approve-codex-hooks` to record the approval in ~/.codex/config.toml as " +
        "Codex's review does. Codex also loads a repository's hooks only when the project is trusted (it asks the first time).",
    );
  }
  if (installs(opts.agent, "gemini")) {
    next.push(
      geminiBin === "aiflare"
        ? "Gemini CLI: its hooks call `aiflare` through PATH, so upgrading or moving aiflare keeps them trusted. The first " +
            "session lists them once as new project hooks (they run)."
        : `Gemini CLI: its hooks call ${geminiBin} (aiflare is not on PATH); Gemini flags hooks whose command changed, so ` +
            "put aiflare on PATH and run install again to keep them trusted across upgrades and moves.",
    );
  }
  if (installs(opts.agent, "copilot")) {
    next.push(
      "GitHub Copilot CLI loads the hooks of .github/hooks/ only in a trusted folder, and `copilot -p` skips them " +
        "without a word otherwise: start `copilot` in this repository once and trust the folder when it asks. " +
        "Commit .github/hooks/aiflare.json to share it; it calls the binary at this path.",
    );
  }
  if (opts.agent === "opencode") {
    next.push(
      `OpenCode loads ${PATHS.opencodePlugin} when it starts (start a new \`opencode\` session); the plugin runs ` +
        `${opts.binary.bin}. With a plugin in .opencode/, OpenCode installs @opencode-ai/plugin there at its start ` +
        "(once, with network; offline it retries for about a minute at every start): see the README, OpenCode.",
    );
  }
  if (opts.mcp) {
    next.push(`Claude Code asks once before it starts the servers of .mcp.json; the aiflare server runs ${opts.binary.bin} mcp.`);
  }
  if (opts.shared) {
    next.push(`Commit .claude/settings.json and the skill to share them; the hooks call ${opts.binary.bin}.`);
  }
  next.push("Run `aiflare doctor` to check the setup; `aiflare uninstall` undoes all of this.");
  return { root, dryRun: opts.dryRun ?? false, changes, warnings, next, recall: recallState(root, env) };
}

/** Installs (or, with dryRun, only plans) aiflare in the repository around `opts.cwd`. */
export async function install(opts: InstallOptions): Promise<InstallReport> {
  if (opts.approveCodexHooks && opts.agent !== "codex" && opts.agent !== "all") {
    throw new AiflareError("INVALID_ARGUMENT", "--approve-codex-hooks goes with --agent codex or --agent all");
  }
  if (opts.agent === "droid" && !opts.factoryUserSettings) {
    throw new AiflareError(
      "INVALID_ARGUMENT",
      "Factory Droid reads hooks from ~/.factory/settings.json, your own settings for every project. To let aiflare add its " +
        "hooks there (the file is backed up first; aiflare uninstall --factory-user-settings takes them out), run " +
        "aiflare install --agent droid --factory-user-settings. Nothing was changed.",
    );
  }
  const report = planInstall(opts);
  if (!report.dryRun) for (const c of report.changes) c.run?.();
  const droid = opts.agent === "droid" || (opts.agent === "all" && opts.factoryUserSettings === true);
  if (droid) {
    const { installFactoryHooks } = await import("./user-hooks.ts");
    report.next.unshift(installFactoryHooks(opts.binary.quoted, opts.env ?? process.env, report.dryRun));
  } else if (opts.agent === "all") {
    report.next.unshift(
      "Skipped Factory Droid: its hooks go in ~/.factory/settings.json, your own settings for every project; add " +
        "--factory-user-settings to install them too (aiflare install --agent all --factory-user-settings).",
    );
  }
  return report;
}

/** After install: records Codex's approval of aiflare's hooks, and says what was done or what is in the way. */
export async function approveInstalledCodexHooks(report: InstallReport, opts: InstallOptions): Promise<string> {
  const { approveCodexHooks } = await import("./codex-trust.ts");
  if (report.dryRun) return "Codex: would record the approval of aiflare's hooks in ~/.codex/config.toml";
  const r = await approveCodexHooks(report.root, opts.binary.quoted, opts.env ?? process.env);
  if (r.problem) {
    throw new AiflareError("AGENT", `the hooks are installed, but their approval was not recorded: ${r.problem}`);
  }
  return `Codex: approved ${r.approved.length} aiflare hooks in ${r.configPath} (as Codex's own review would)`;
}
