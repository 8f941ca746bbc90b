/**
 * `aiflare doctor`: each check is one function from a context to result lines. Checks of the index and of
 * sync read them through small providers in the context, so a test can stand in for them and this module
 * loads SQLite only when those checks run.
 */
import { readdirSync, statSync } from "node:fs";
import { join, relative, resolve } from "node:path";
import { describeError } from "../../errors.ts";
import { SESSIONS_REF, TIMELINE_REF, readRef } from "../../store/refs.ts";
import { gitSync } from "../../util/git.ts";
import { CONFIG_FILE, loadConfig, maskKey, userConfigPath } from "../config.ts";
import { ensureOwnDir, isExecutableFile, isInside, realTarget } from "../fsutil.ts";
import { endpointProblem } from "../sync/settings.ts";
import type { RepoPaths } from "../repo.ts";
import { clock, day } from "../history/style.ts";
import { STALE_SESSION_MS } from "../session-cleanup.ts";
import { CONTEXT_DIR, SESSION_FILE_RE } from "../session.ts";
import { BATCH_PATH } from "../sync/client.ts";
import { firstShellWord, isAiflareCommand, onPath, shellQuote } from "./binary.ts";
import { readText } from "./files.ts";
import { CHAINED_SUFFIX, GIT_HOOKS, inspectGitHook } from "./git-hooks.ts";
import { cursorFileProblems, hasCursorHooks } from "./cursor-hooks.ts";
import { auditCopilotHooks, hasCopilotHooks } from "./copilot-hooks.ts";
import { copilotTrusts } from "./copilot-trust.ts";
import { hasAiflareHooks } from "./hooks-json.ts";
import { checkRecall } from "./recall-state.ts";
import { OPENCODE_PLUGIN_MARK, opencodePluginBinary, opencodePluginText } from "./opencode-plugin.ts";
import { agentHookFiles, PATHS } from "./targets.ts";
import { codexFragment, skillText } from "./templates.ts";

export type CheckStatus = "ok" | "warn" | "fail" | "skip";

/** One line of the report. `fix` says what to do when it is not ok. */
export interface CheckResult {
  id: string;
  status: CheckStatus;
  message: string;
  fix?: string;
}

/** What the index can tell doctor. */
export interface IndexStatus {
  /** timeline commit the index was last built from; null when never built */
  indexedTimelineHead: string | null;
}

/** What sync can tell doctor. */
export interface SyncStatus {
  /** entries written locally and not yet accepted by the backend */
  pending: number;
  lastError?: { at: string; message: string };
}

export interface DoctorContext {
  repo: RepoPaths;
  hooksDir: string;
  /** this binary: path and version */
  binary: { bin: string; quoted: string };
  version: string;
  env: Record<string, string | undefined>;
  online: boolean;
  now: number;
  /** runs git in the working tree */
  git(args: string[]): { code: number; stdout: string; stderr: string };
  /** runs `<bin> --version`, undefined when it cannot run */
  versionOf(bin: string): string | undefined;
  fetch: typeof fetch;
  providers: {
    index?: (repo: RepoPaths) => Promise<IndexStatus | null>;
    sync?: (repo: RepoPaths) => Promise<SyncStatus | null>;
  };
}

export type DoctorCheck = (ctx: DoctorContext) => CheckResult[] | Promise<CheckResult[]>;

const ok = (id: string, message: string): CheckResult => ({ id, status: "ok", message });
const warn = (id: string, message: string, fix?: string): CheckResult => ({ id, status: "warn", message, fix });
const fail = (id: string, message: string, fix?: string): CheckResult => ({ id, status: "fail", message, fix });

function hookFiles(ctx: DoctorContext) {
  const root = ctx.repo.root;
  return agentHookFiles(ctx.env.HOME).map((f) => ({ ...f, fragment: f.fragmentFor(ctx.binary.quoted), text: readText(f.path ?? join(root, f.rel)) }));
}

/** GitHub Copilot CLI's hooks file (its own flat layout), or undefined when there is none with aiflare's hooks. */
function copilotHooksCheck(ctx: DoctorContext): CheckResult | undefined {
  const rel = PATHS.copilotHooks;
  const text = readText(join(ctx.repo.root, rel));
  if (text === null) return undefined;
  let audit;
  try {
    audit = auditCopilotHooks(text, ctx.binary.quoted, rel);
    const called = audit.commands[0] === undefined ? undefined : firstShellWord(audit.commands[0]);
    if (called !== undefined && shellQuote(called) !== ctx.binary.quoted) audit = auditCopilotHooks(text, shellQuote(called), rel);
  } catch (err) {
    return fail("hooks:copilot-json", describeError(err).replace(/^CONFIG: /, ""), `fix the JSON in ${rel}, then run aiflare install --agent copilot`);
  }
  if (!hasCopilotHooks(text)) return undefined;
  if (audit.missing.length > 0) return fail("hooks:copilot", `Copilot CLI hooks in ${rel} lack ${audit.missing.join(", ")}`, "run aiflare install --agent copilot");
  if (audit.outdated.length > 0) {
    return warn("hooks:copilot", `Copilot CLI hooks in ${rel} differ from this version's (${audit.outdated.join(", ")})`, "run aiflare install --agent copilot to update them");
  }
  return ok("hooks:copilot", `Copilot CLI hooks in ${rel}`);
}

/**
 * aiflare's OpenCode plugin, or undefined when there is none: the binary it runs must be there, and its text this
 * version's (an older plugin may miss events).
 */
function opencodePluginCheck(ctx: DoctorContext): CheckResult | undefined {
  const rel = PATHS.opencodePlugin;
  const text = readText(join(ctx.repo.root, rel));
  if (text === null || !text.startsWith(OPENCODE_PLUGIN_MARK)) return undefined;
  const bin = opencodePluginBinary(text);
  if (bin === undefined) return fail("hooks:opencode", `the OpenCode plugin ${rel} names no aiflare binary`, "run aiflare install --agent opencode");
  if (!isExecutableFile(bin)) return fail("hooks:opencode", `the OpenCode plugin ${rel} runs ${bin}, which is not an executable file`, "run aiflare install --agent opencode");
  if (text !== opencodePluginText(bin)) {
    return warn("hooks:opencode", `the OpenCode plugin ${rel} differs from this version's`, "run aiflare install --agent opencode to update it");
  }
  return ok("hooks:opencode", `OpenCode plugin ${rel} (runs ${bin})`);
}

/**
 * Copilot CLI runs a repository's hooks only in a folder the user trusted, and skips them silently otherwise
 * (`copilot -p` asks nothing): read its trusted folders the way it does.
 */
export const checkCopilotTrust: DoctorCheck = (ctx) => {
  const text = readText(join(ctx.repo.root, PATHS.copilotHooks));
  if (text === null || !hasCopilotHooks(text)) return [];
  const { trusted, configPath } = copilotTrusts(ctx.repo.root, ctx.env);
  if (trusted) return [ok("copilot-trust", `Copilot CLI trusts this folder (${configPath}), so it runs the hooks of ${PATHS.copilotHooks}`)];
  return [
    fail(
      "copilot-trust",
      `Copilot CLI skips the hooks of ${PATHS.copilotHooks} without a word: this folder is not trusted in ${configPath}`,
      `start copilot in ${ctx.repo.root} and choose to trust the folder (or add it to "trustedFolders" in ${configPath})`,
    ),
  ];
};

/** Every hook entry install writes is present in the agent settings that have aiflare's hooks. */
export const checkHookEntries: DoctorCheck = (ctx) => {
  const out: CheckResult[] = [];
  let any = false;
  for (const f of hookFiles(ctx)) {
    if (f.text === null) continue;
    let audit;
    try {
      audit = f.audit(f.text, f.fragment, f.rel);
      // hooks that call aiflare by another path are compared as if written by that binary: the path is checkBinary's
      const called = audit.commands[0] === undefined ? undefined : firstShellWord(audit.commands[0]);
      if (called !== undefined && shellQuote(called) !== ctx.binary.quoted) audit = f.audit(f.text, f.fragmentFor(shellQuote(called)), f.rel);
    } catch (err) {
      out.push(fail(`hooks:${f.rel}`, describeError(err).replace(/^CONFIG: /, ""), `fix the JSON in ${f.rel}, then run aiflare install`));
      continue;
    }
    if (!f.has(f.text)) continue;
    any = true;
    if (audit.missing.length > 0) {
      out.push(fail(`hooks:${f.rel}`, `${f.agent} hooks in ${f.rel} lack ${audit.missing.join(", ")}`, "run aiflare install"));
    } else if (audit.outdated.length > 0) {
      out.push(
        warn(`hooks:${f.rel}`, `${f.agent} hooks in ${f.rel} differ from this version's (${audit.outdated.join(", ")})`, "run aiflare install to update them"),
      );
    } else out.push(ok(`hooks:${f.rel}`, `${f.agent} hooks in ${f.rel}`));
  }
  for (const check of [copilotHooksCheck(ctx), opencodePluginCheck(ctx)]) {
    if (!check) continue;
    any = true;
    out.push(check);
  }
  if (!any && !out.some((r) => r.status === "fail")) {
    const gitOnly = GIT_HOOKS.some((h) => inspectGitHook(ctx.hooksDir, h).ours);
    out.push(
      fail(
        "hooks",
        gitOnly
          ? `no agent hooks (only git hooks): agents record nothing in this worktree`
          : "no agent hooks: aiflare is not installed in this repository",
        "run aiflare install (add --agent codex for Codex, --agent cursor for Cursor, --agent copilot for Copilot CLI, --agent opencode for OpenCode)",
      ),
    );
  }
  return out;
};

/**
 * Codex runs a repository's hooks only once the user approved them, and skips unapproved or changed ones silently
 * (`codex exec` says nothing): ask Codex itself which of aiflare's hooks it would run.
 */
export const checkCodexApproval: DoctorCheck = async (ctx) => {
  const hooksFile = join(ctx.repo.root, PATHS.codexHooks);
  const text = readText(hooksFile);
  if (text === null || !hasAiflareHooks(text)) return [];
  const { aiflareHooks, findCodex, listCodexHooks } = await import("./codex-trust.ts");
  const codex = findCodex(ctx.env);
  if (!codex) return [warn("codex-approval", "cannot check whether Codex runs aiflare's hooks: codex is not on PATH")];
  const list = await listCodexHooks(codex, ctx.repo.root, ctx.env);
  const expected = Object.keys(codexFragment(ctx.binary.quoted).hooks).length;
  const ours = aiflareHooks(list, hooksFile, ctx.binary.quoted);
  const fix = "run aiflare install --agent codex --approve-codex-hooks, or approve them in Codex (/hooks)";
  if (ours.length === 0) {
    if (list.warnings.some((w) => /trusted project|until the project is trusted/i.test(w))) {
      return [fail("codex-approval", "Codex does not load this repository's hooks: the project is not trusted in Codex", `trust ${ctx.repo.root} in Codex (it asks when you start codex here)`)];
    }
    return [fail("codex-approval", "Codex lists none of aiflare's hooks for this repository", "run aiflare install --agent codex")];
  }
  const pending = ours.filter((h) => h.trustStatus !== "trusted");
  if (pending.length > 0) {
    const byStatus = new Map<string, string[]>();
    for (const h of pending) byStatus.set(h.trustStatus, [...(byStatus.get(h.trustStatus) ?? []), h.eventName]);
    const detail = [...byStatus].map(([st, evs]) => `${st}: ${evs.join(", ")}`).join("; ");
    return [fail("codex-approval", `Codex skips ${pending.length} of aiflare's ${ours.length} hooks until they are approved (${detail})`, fix)];
  }
  if (ours.length < expected) return [warn("codex-approval", `Codex runs ${ours.length} of aiflare's ${expected} hooks`, "run aiflare install --agent codex")];
  return [ok("codex-approval", `Codex runs aiflare's ${ours.length} hooks (approved)`)];
};

/** The binaries the hooks call exist, run, and are this version. */
export const checkBinary: DoctorCheck = (ctx) => {
  // binary → which hooks call it ("Claude Code", "git" …), so the line says whose hooks it means
  const callers = new Map<string, Set<string>>();
  const add = (bin: string, who: string) => callers.set(bin, (callers.get(bin) ?? new Set()).add(who));
  for (const f of hookFiles(ctx)) {
    if (f.text === null) continue;
    try {
      for (const cmd of f.audit(f.text, f.fragment, f.rel).commands) add(firstShellWord(cmd), f.agent);
    } catch {
      // reported by checkHookEntries
    }
  }
  for (const hook of GIT_HOOKS) {
    const b = inspectGitHook(ctx.hooksDir, hook).binary;
    if (b) add(b, "git");
  }
  if (callers.size === 0) return [];
  const rootReal = realTarget(ctx.repo.root);
  const self = realTarget(ctx.binary.bin);
  return [...callers].map(([called, who]) => {
    const hooks = `${[...who].join(" and ")} hooks`;
    // a bare name (Gemini CLI's hooks call `aiflare`) is what the agent's shell finds on PATH
    const bin = called.includes("/") ? called : onPath(called, ctx.env.PATH);
    if (bin === undefined) {
      return fail(`binary:${called}`, `${hooks} call ${called} through PATH, and no ${called} is on PATH`, "put aiflare on PATH, or run aiflare install again");
    }
    // a program that came with the repository is never run to ask its version: that would run the repository's code
    const real = realTarget(resolve(ctx.repo.root, bin));
    if (isInside(real, rootReal) && real !== self) {
      return fail(
        `binary:${bin}`,
        `${hooks} call ${bin}, a file inside this repository, not an installed aiflare; doctor does not run it`,
        "if the repository brought these hooks, do not trust them; run aiflare install to point the hooks at your aiflare",
      );
    }
    if (!isExecutableFile(bin)) {
      return fail(`binary:${bin}`, `${hooks} call ${bin}, which does not exist or cannot run`, "run aiflare install with the aiflare you use now");
    }
    const v = ctx.versionOf(bin);
    if (v === undefined) return fail(`binary:${bin}`, `${hooks} call ${bin}, which does not run`, "reinstall aiflare, then run aiflare install");
    if (v !== ctx.version) {
      return warn(`binary:${bin}`, `${hooks} call ${bin}, version ${v}; this is ${ctx.version}`, "run aiflare install with the aiflare you mean to use");
    }
    return ok(`binary:${bin}`, `${hooks} call ${bin} (${v})`);
  });
};

/** The skill file is there and is the one this version writes. */
export const checkSkill: DoctorCheck = (ctx) => {
  const text = readText(join(ctx.repo.root, PATHS.skill));
  if (text === null) return [fail("skill", `${PATHS.skill} is missing`, "run aiflare install")];
  if (text !== skillText(ctx.binary.quoted)) return [warn("skill", `${PATHS.skill} differs from this version's`, "run aiflare install to refresh it (your edits are backed up)")];
  return [ok("skill", PATHS.skill)];
};

/** pre-push and post-rewrite are aiflare's wrappers, executable; chained hooks still runnable. */
export const checkGitHooks: DoctorCheck = (ctx) => {
  const out: CheckResult[] = [];
  for (const hook of GIT_HOOKS) {
    const s = inspectGitHook(ctx.hooksDir, hook);
    const where = relative(ctx.repo.root, s.path).startsWith("..") ? s.path : relative(ctx.repo.root, s.path);
    if (!s.present) out.push(fail(`git-hook:${hook}`, `git ${hook} hook missing (${where})`, "run aiflare install"));
    else if (!s.ours) {
      out.push(
        fail(
          `git-hook:${hook}`,
          `${where} is not aiflare's${s.chained ? ` (something replaced it; ${hook}${CHAINED_SUFFIX} is still there)` : ""}`,
          "run aiflare install (your hook is kept and chained)",
        ),
      );
    } else if (!s.executable) out.push(fail(`git-hook:${hook}`, `${where} is not executable`, `chmod +x ${s.path}`));
    else out.push(ok(`git-hook:${hook}`, `git ${hook} hook (${where})`));
    if (s.chained && s.ours) {
      if (s.chained.executable) out.push(ok(`git-hook:${hook}:chained`, `your earlier ${hook} hook runs first`));
      else {
        out.push(
          warn(
            `git-hook:${hook}:chained`,
            `chained ${hook}${CHAINED_SUFFIX} is not executable, so it does not run (git skipped it before too)`,
            `chmod +x ${s.chained.path}`,
          ),
        );
      }
    }
  }
  return out;
};

/** `.context-capture/` and `aiflare.yml` are neither tracked nor about to be. */
export const checkNotTracked: DoctorCheck = (ctx) => {
  const out: CheckResult[] = [];
  const tracked = ctx.git(["ls-files", "--", CONTEXT_DIR]).stdout.trim();
  if (tracked) out.push(fail("tracked:context", `${CONTEXT_DIR}/ has files tracked by git (raw conversation)`, `git rm -r --cached ${CONTEXT_DIR} && git commit`));
  else out.push(ok("tracked:context", `${CONTEXT_DIR}/ is not tracked by git`));
  if (ctx.git(["ls-files", "--", CONFIG_FILE]).stdout.trim()) {
    let ignored = 0;
    try {
      ignored = loadConfig(ctx.repo.root, ctx.env).ignored.filter((i) => i.from === CONFIG_FILE).length;
    } catch {
      // reported by checkConfig
    }
    // a tracked file may share redact.patterns with a team; anything more in it is ignored, and may be a leaked key
    if (ignored > 0) {
      out.push(fail("tracked:config", `${CONFIG_FILE} is tracked by git: only its redact.patterns are used, and it may hold an API key`, `if it is yours: git rm --cached ${CONFIG_FILE} && git commit, then rotate the key`));
    } else out.push(ok("tracked:config", `${CONFIG_FILE} is tracked by git (team-shared): only its redact.patterns are used`));
  }
  if (ctx.git(["ls-files", "--", PATHS.claudeLocal]).stdout.trim()) {
    out.push(
      warn(
        "tracked:settings-local",
        `${PATHS.claudeLocal} is tracked by git, but it holds this machine's path to aiflare`,
        `git rm --cached ${PATHS.claudeLocal}, add it to .gitignore and commit (aiflare install --shared writes the shared .claude/settings.json)`,
      ),
    );
  }
  const ignored = ctx.git(["check-ignore", "-q", "--no-index", CONFIG_FILE]).code === 0;
  if (!ignored) out.push(warn("ignored:config", `${CONFIG_FILE} is not git-ignored`, "run aiflare install (it adds the line to .gitignore)"));
  return out;
};

/** Backend settings present and valid. */
export const checkConfig: DoctorCheck = (ctx) => {
  try {
    const cfg = loadConfig(ctx.repo.root, ctx.env);
    if (!cfg.apiKey || !cfg.endpoint) {
      return [
        warn(
          "config",
          `no backend configured (${!cfg.endpoint ? "endpoint" : "api_key"} missing): history stays local`,
          `create ${CONFIG_FILE} with api_key: and endpoint:, or set AIFLARE_API_KEY and AIFLARE_ENDPOINT`,
        ),
      ];
    }
    const unsafe = endpointProblem(cfg);
    if (unsafe) return [fail("config", unsafe, "use an https:// endpoint")];
    const from = (s: string) => cfg.origins.find((o) => o.setting === s)?.from;
    return [ok("config", `backend ${cfg.endpoint} (from ${from("endpoint")}) with key ${maskKey(cfg.apiKey)} (from ${from("api_key")})`)];
  } catch (err) {
    return [fail("config", describeError(err).replace(/^CONFIG: /, ""), `fix ${CONFIG_FILE}`)];
  }
};

/**
 * Where each setting came from and which were ignored (SPEC §9), and whether `.context-capture/` is a real directory
 * of this user: what a repository's own files could not make aiflare do.
 */
export const checkTrust: DoctorCheck = (ctx) => {
  const out: CheckResult[] = [];
  try {
    ensureOwnDir(ctx.repo.root, join(ctx.repo.root, CONTEXT_DIR), false);
  } catch (err) {
    out.push(fail("trust:context-dir", `${describeError(err).replace(/^UNSAFE_PATH: /, "")}`, `rm ${CONTEXT_DIR} (a link or someone else's directory), then run aiflare install`));
  }
  let cfg;
  try {
    cfg = loadConfig(ctx.repo.root, ctx.env);
  } catch {
    return out; // reported by checkConfig
  }
  for (const o of cfg.origins) out.push(ok(`setting:${o.setting}`, `${o.setting} from ${o.from}`));
  for (const i of cfg.ignored) {
    out.push(
      warn(
        `ignored:${i.setting}`,
        `ignored ${i.setting} in ${i.from}: ${i.reason}`,
        `endpoint, api_key, redact.allow and recall are taken only from the environment, ${userConfigPath(ctx.env)}, or an untracked ${CONFIG_FILE} of yours`,
      ),
    );
  }
  return out;
};

/** Live session files that have not been touched for a week (a session that ended without SessionEnd). */
export const checkOldSessionFiles: DoctorCheck = (ctx) => {
  const dir = join(ctx.repo.root, CONTEXT_DIR);
  let names: string[];
  try {
    names = readdirSync(dir).filter((n) => SESSION_FILE_RE.test(n));
  } catch {
    return [];
  }
  const old = names.filter((n) => {
    try {
      return ctx.now - statSync(join(dir, n)).mtimeMs > STALE_SESSION_MS;
    } catch {
      return false;
    }
  });
  if (old.length === 0) return [ok("sessions", `no stale session files in ${CONTEXT_DIR}/`)];
  const shown = old.slice(0, 3).map((n) => join(CONTEXT_DIR, n));
  return [
    warn(
      "sessions",
      `${old.length} session file(s) in ${CONTEXT_DIR}/ untouched for over 7 days`,
      `if those sessions are over, delete them: rm ${shown.join(" ")}${old.length > 3 ? " …" : ""}`,
    ),
  ];
};

/** The aiflare branches point at commits and `git fsck` finds nothing wrong in what they reach. */
export const checkBranches: DoctorCheck = (ctx) => {
  const refs = [TIMELINE_REF, SESSIONS_REF].map((ref) => ({ ref, hash: readRef(ctx.repo.commonDir, ref) }));
  const present = refs.filter((r): r is { ref: string; hash: string } => r.hash !== null);
  if (present.length === 0) return [ok("branches", "no aiflare history yet")];
  const out: CheckResult[] = [];
  for (const r of present) {
    const t = ctx.git(["cat-file", "-t", r.hash]);
    if (t.code !== 0 || t.stdout.trim() !== "commit") {
      out.push(fail(`branch:${r.ref}`, `${r.ref} points at ${r.hash}, which is not a readable commit`, "run aiflare doctor after restoring the object, or aiflare uninstall --purge to start over"));
    }
  }
  if (out.length > 0) return out;
  const fsck = ctx.git(["fsck", "--no-dangling", "--no-progress", ...present.map((r) => r.hash)]);
  const problems = `${fsck.stdout}${fsck.stderr}`.split("\n").filter((l) => l.trim() && !/^(Checking|notice:)/.test(l));
  if (fsck.code !== 0 || problems.length > 0) {
    return [fail("branches", `git fsck reports problems: ${problems.slice(0, 3).join("; ") || `exit ${fsck.code}`}`, "run git fsck --full for details")];
  }
  return [ok("branches", `${present.map((r) => r.ref.replace("refs/heads/", "")).join(", ")} readable, git fsck clean`)];
};

/** The index was built from the current timeline head. */
export const checkIndex: DoctorCheck = async (ctx) => {
  if (!ctx.providers.index) return [];
  const status = await ctx.providers.index(ctx.repo);
  const head = readRef(ctx.repo.commonDir, TIMELINE_REF);
  if (!status || status.indexedTimelineHead === null) {
    return head ? [warn("index", "index not built yet", "run aiflare history list (it rebuilds the index)")] : [];
  }
  if (status.indexedTimelineHead !== head) {
    return [warn("index", "index is behind the timeline branch", "run aiflare history list (it catches up)")];
  }
  return [ok("index", "index in step with the timeline branch")];
};

/** Entries waiting to be sent and the last sync error. */
export const checkSync: DoctorCheck = async (ctx) => {
  if (!ctx.providers.sync) return [];
  const s = await ctx.providers.sync(ctx.repo);
  if (!s) return [];
  const out: CheckResult[] = [];
  out.push(s.pending > 0 ? warn("sync:pending", `${s.pending} entr${s.pending === 1 ? "y" : "ies"} not yet sent`, "run aiflare sync (or git push)") : ok("sync:pending", "nothing waiting to be sent"));
  if (s.lastError) {
    const ms = Date.parse(s.lastError.at);
    const at = Number.isFinite(ms) ? `${day(ms)} ${clock(ms)}` : s.lastError.at;
    // the setup is fine; sending failed once (network, backend) and will be tried again
    out.push(warn("sync:error", `last sync failed at ${at}: ${s.lastError.message}`, "fix the cause, then run aiflare sync"));
  }
  return out;
};

/** With --online: the backend answers and accepts the key (an empty batch changes nothing). */
export const checkBackend: DoctorCheck = async (ctx) => {
  if (!ctx.online) return [];
  let cfg;
  try {
    cfg = loadConfig(ctx.repo.root, ctx.env);
  } catch {
    return []; // reported by checkConfig
  }
  if (!cfg.endpoint || !cfg.apiKey) return [fail("backend", "cannot check the backend: no endpoint or api_key", `set them in ${CONFIG_FILE}`)];
  // the check sends the key: never in clear to another machine without the user's opt-in
  const unsafe = endpointProblem(cfg);
  if (unsafe) return [fail("backend", `not checked: ${unsafe}`, "use an https:// endpoint")];
  const url = `${cfg.endpoint}${BATCH_PATH}`;
  let res: Response;
  try {
    res = await ctx.fetch(url, {
      method: "POST",
      headers: { "content-type": "application/json", "x-api-key": cfg.apiKey },
      body: JSON.stringify({ captures: [] }),
      signal: AbortSignal.timeout(5000),
    });
  } catch (err) {
    return [fail("backend", `${cfg.endpoint} unreachable (${(err as Error).message})`, "check the endpoint and your network")];
  }
  // only the status matters: the body (of any size) is left unread
  res.body?.cancel().catch(() => {});
  if (res.status === 401) return [fail("backend", `${cfg.endpoint} rejects the API key (401)`, `check api_key in ${CONFIG_FILE}`)];
  if (res.status === 404) return [fail("backend", `${cfg.endpoint} has no project for this key (404)`, "check the key and the endpoint")];
  if (res.status >= 500) return [fail("backend", `${cfg.endpoint} answers ${res.status}`, "try again later")];
  if (res.status === 429) return [warn("backend", `${cfg.endpoint} asks to slow down (429)`)];
  return [ok("backend", `${cfg.endpoint} reachable, key accepted (${res.status})`)];
};

/** Cursor reads `.cursor/hooks.json` as JSONC at version 1: what it would misread there, in a file with aiflare's hooks. */
export const checkCursorHooksFile: DoctorCheck = (ctx) => {
  const text = readText(join(ctx.repo.root, PATHS.cursorHooks));
  if (text === null || !hasCursorHooks(text)) return [];
  const problems = cursorFileProblems(text);
  if (problems.length === 0) return [ok("cursor-hooks-file", `Cursor reads ${PATHS.cursorHooks} as written (version 1, known events)`)];
  return [fail("cursor-hooks-file", `Cursor may misread ${PATHS.cursorHooks}: ${problems.join("; ")}`, `fix ${PATHS.cursorHooks}, then run aiflare install --agent cursor`)];
};

/** A Gemini CLI hook as its trust list names it: `name:command`. */
function geminiTrustKeys(text: string): string[] {
  const keys: string[] = [];
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch {
    return keys; // reported by checkHookEntries
  }
  const hooks = (doc as { hooks?: unknown }).hooks;
  if (!hooks || typeof hooks !== "object") return keys;
  for (const groups of Object.values(hooks as Record<string, unknown>)) {
    if (!Array.isArray(groups)) continue;
    for (const g of groups as { hooks?: unknown }[]) {
      if (!g || !Array.isArray(g.hooks)) continue;
      for (const h of g.hooks as { name?: unknown; command?: unknown }[]) {
        if (h && isAiflareCommand(h.command)) keys.push(`${typeof h.name === "string" ? h.name : ""}:${h.command as string}`);
      }
    }
  }
  return keys;
}

/**
 * Gemini CLI trusts a project's hooks by name and command (`~/.gemini/trusted_hooks.json`, `$GEMINI_CLI_HOME` first, per project folder) and
 * warns about new or changed ones before it runs them: say which of aiflare's it will still warn about.
 */
export const checkGeminiTrust: DoctorCheck = (ctx) => {
  const text = readText(join(ctx.repo.root, PATHS.geminiSettings));
  if (text === null || !hasAiflareHooks(text)) return [];
  const keys = geminiTrustKeys(text);
  const home = ctx.env.GEMINI_CLI_HOME || ctx.env.HOME || "";
  let trusted: string[] = [];
  try {
    const doc = JSON.parse(readText(join(home, ".gemini", "trusted_hooks.json")) ?? "{}") as Record<string, unknown>;
    const list = doc[ctx.repo.root];
    if (Array.isArray(list)) trusted = list.filter((k): k is string => typeof k === "string");
  } catch {
    // unreadable: nothing trusted
  }
  const untrusted = keys.filter((k) => !trusted.includes(k));
  if (untrusted.length === 0) return [ok("gemini-trust", `Gemini CLI trusts aiflare's ${keys.length} hooks in this project`)];
  const which = untrusted.map((k) => k.slice(0, k.indexOf(":"))).join(", ");
  return [
    warn(
      "gemini-trust",
      `Gemini CLI has not yet seen ${untrusted.length} of aiflare's ${keys.length} hooks here (${which}): it warns about them when it starts`,
      "start gemini in this repository once; if the command changed since (aiflare moved), run aiflare install with aiflare on PATH",
    ),
  ];
};

/** The checks doctor runs, in report order. Adding a check is adding a function here. */
export const DOCTOR_CHECKS: DoctorCheck[] = [
  checkHookEntries,
  checkCodexApproval,
  checkCursorHooksFile,
  checkGeminiTrust,
  checkCopilotTrust,
  checkBinary,
  checkSkill,
  checkRecall,
  checkGitHooks,
  checkNotTracked,
  checkConfig,
  checkTrust,
  checkOldSessionFiles,
  checkBranches,
  checkIndex,
  checkSync,
  checkBackend,
];

export interface DoctorReport {
  root: string;
  ok: boolean;
  results: CheckResult[];
}

/** Runs every check; a check that throws becomes a failed line instead of stopping the others. */
export async function runDoctor(ctx: DoctorContext, checks: DoctorCheck[] = DOCTOR_CHECKS): Promise<DoctorReport> {
  const results: CheckResult[] = [];
  for (const check of checks) {
    try {
      results.push(...(await check(ctx)));
    } catch (err) {
      results.push(fail(check.name || "check", `check failed: ${describeError(err)}`));
    }
  }
  return { root: ctx.repo.root, ok: !results.some((r) => r.status === "fail"), results };
}

/** The index and sync providers of a real repository: the index file and aiflare.yml, read when the checks run. */
export const repositoryProviders: DoctorContext["providers"] = {
  index: async (repo) => {
    const { indexedTips } = await import("../../store/index-db.ts");
    const tips = indexedTips(repo.commonDir);
    return tips && { indexedTimelineHead: tips.timeline };
  },
  sync: async (repo) => {
    const cfg = loadConfig(repo.root);
    if (!cfg.apiKey || !cfg.endpoint) return null; // nothing is sent without a backend
    const { withIndex, pendingEntryCount, lastSyncError } = await import("../../store/index-db.ts");
    const { syncTarget } = await import("../sync/settings.ts");
    const target = syncTarget(cfg)!.target;
    return withIndex(repo.commonDir, (db) => ({
      pending: pendingEntryCount(db, target),
      lastError: lastSyncError(db, target) ?? undefined,
    }));
  },
};

/** Builds the context doctor runs in for the repository around `cwd`, with real git, processes and network. */
export function doctorContext(opts: {
  repo: RepoPaths;
  hooksDir: string;
  binary: { bin: string; quoted: string };
  version: string;
  online: boolean;
  env?: Record<string, string | undefined>;
  providers?: DoctorContext["providers"];
}): DoctorContext {
  const env = opts.env ?? process.env;
  return {
    repo: opts.repo,
    hooksDir: opts.hooksDir,
    binary: opts.binary,
    version: opts.version,
    env,
    online: opts.online,
    now: Date.now(),
    git: (args) => gitSync(args, { cwd: opts.repo.root, env }),
    versionOf(bin) {
      try {
        const r = Bun.spawnSync([bin, "--version"], { env, stdout: "pipe", stderr: "ignore", timeout: 10_000 });
        return r.exitCode === 0 ? r.stdout.toString().trim() : undefined;
      } catch {
        return undefined;
      }
    },
    fetch: globalThis.fetch,
    providers: opts.providers ?? {},
  };
}
