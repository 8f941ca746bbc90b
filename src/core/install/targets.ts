/** The files install edits in a working tree, each as a FileRule. */
import { lstatSync } from "node:fs";
import { join } from "node:path";
import { CONFIG_FILE } from "../config-files.ts";
import { EMPTY_JSON, readText, type FileRule } from "./files.ts";
import { auditHooks, hasAiflareHooks, mergeHooks, removeHooks } from "./hooks-json.ts";
import { hasCopilotHooks, mergeCopilotHooks, removeCopilotHooks } from "./copilot-hooks.ts";
import { mcpRule } from "./mcp-json.ts";
import {
  addDirective,
  addGitignoreLines,
  hasGitignoreLines,
  mentionsSkill,
  removeDirective,
  removeGitignoreLines,
  SETTINGS_LOCAL_LINE,
} from "./text-edits.ts";
import { OPENCODE_PLUGIN_MARK, opencodePluginText } from "./opencode-plugin.ts";
import { auditCursorHooks, hasCursorHooks, mergeCursorHooks, removeCursorHooks } from "./cursor-hooks.ts";
import { claudeFragment, codexFragment, cursorFragment, DIRECTIVE_LINE, droidFragment, geminiFragment, qwenFragment, skillText, whySkillText, type HooksFragment } from "./templates.ts";

export type InstallAgent = "claude" | "codex" | "cursor" | "qwen" | "droid" | "gemini" | "copilot" | "opencode" | "all";

/** Repo-relative paths of everything install may write in the working tree. */
export const PATHS = {
  claudeLocal: ".claude/settings.local.json",
  claudeShared: ".claude/settings.json",
  codexHooks: ".codex/hooks.json",
  cursorHooks: ".cursor/hooks.json",
  qwenSettings: ".qwen/settings.json",
  geminiSettings: ".gemini/settings.json",
  /** GitHub Copilot CLI reads every `.github/hooks/*.json` of the repository (once the folder is trusted) */
  copilotHooks: ".github/hooks/aiflare.json",
  /** OpenCode loads every `.opencode/plugins/*.js` of the repository at its start */
  opencodePlugin: ".opencode/plugins/aiflare.js",
  skill: ".claude/skills/context-capture/SKILL.md",
  whySkill: ".claude/skills/why/SKILL.md",
  /** where Codex discovers a repository's skills */
  codexSkill: ".agents/skills/context-capture/SKILL.md",
  codexWhySkill: ".agents/skills/why/SKILL.md",
  claudeMd: "CLAUDE.md",
  claudeMdAlt: ".claude/CLAUDE.md",
  agentsMd: "AGENTS.md",
  /** the context file Gemini CLI reads */
  geminiMd: "GEMINI.md",
  gitignore: ".gitignore",
} as const;

/** The agent settings files that hold aiflare's hooks (JSON with a `hooks` object), wherever install put them. */

function hooksRule(root: string, rel: string, label: string, fragment: ReturnType<typeof claudeFragment>): FileRule {
  return {
    path: join(root, rel),
    label,
    apply: (before) => mergeHooks(before, fragment, rel),
    remove: (current) => removeHooks(current, rel),
    hasOurs: hasAiflareHooks,
    empty: EMPTY_JSON,
  };
}

/** Claude Code hooks in `.claude/settings.local.json` (or the shared `.claude/settings.json`). */
export function claudeSettingsRule(root: string, binQuoted: string, shared = false): FileRule {
  const rel = shared ? PATHS.claudeShared : PATHS.claudeLocal;
  return hooksRule(root, rel, "Claude Code hooks", claudeFragment(binQuoted));
}

/** Codex hooks in `.codex/hooks.json`. */
export function codexHooksRule(root: string, binQuoted: string): FileRule {
  return hooksRule(root, PATHS.codexHooks, "Codex hooks", codexFragment(binQuoted));
}

/** Gemini CLI hooks in `.gemini/settings.json`, calling `bin` (stableCommandBinary). */
export function geminiSettingsRule(root: string, bin: string): FileRule {
  return hooksRule(root, PATHS.geminiSettings, "Gemini CLI hooks", geminiFragment(bin));
}

/** Qwen Code hooks in `.qwen/settings.json` (the project's settings; other keys there are kept). */
export function qwenSettingsRule(root: string, binQuoted: string): FileRule {
  const rule = hooksRule(root, PATHS.qwenSettings, "Qwen Code hooks", qwenFragment(binQuoted));
  // Qwen Code stamps a settings file it reads with its format version (`$version`): that stamp alone is not the
  // user's, so a file left holding nothing else goes as a file install created would
  return { ...rule, remove: (current, original) => withoutStamp(rule.remove(current, original), "$version") };
}

/** `text` (a JSON object), or null when its only key is `stamp`. */
function withoutStamp(text: string | null, stamp: string): string | null {
  if (text === null) return null;
  try {
    const doc = JSON.parse(text) as Record<string, unknown>;
    const keys = Object.keys(doc);
    return keys.length === 1 && keys[0] === stamp ? null : text;
  } catch {
    return text;
  }
}

/** Cursor hooks in `.cursor/hooks.json` (its own flat layout). */
export function cursorHooksRule(root: string, binQuoted: string): FileRule {
  const rel = PATHS.cursorHooks;
  const fragment = cursorFragment(binQuoted);
  return {
    path: join(root, rel),
    label: "Cursor hooks",
    apply: (before) => mergeCursorHooks(before, fragment, rel),
    remove: (current) => removeCursorHooks(current, rel),
    hasOurs: hasCursorHooks,
    empty: '{\n  "version": 1\n}\n',
  };
}

/** The hooks files of every agent, how to audit each, and what its fragment is (doctor, uninstall). */
export function agentHookFiles(home?: string): AgentHookFile[] {
  const nested = { audit: auditHooks, has: hasAiflareHooks };
  return [
    { rel: PATHS.claudeLocal, agent: "Claude Code", fragmentFor: claudeFragment, ...nested },
    { rel: PATHS.claudeShared, agent: "Claude Code", fragmentFor: claudeFragment, ...nested },
    { rel: PATHS.codexHooks, agent: "Codex", fragmentFor: codexFragment, ...nested },
    { rel: PATHS.cursorHooks, agent: "Cursor", fragmentFor: cursorFragment, audit: auditCursorHooks, has: hasCursorHooks },
    { rel: PATHS.qwenSettings, agent: "Qwen Code", fragmentFor: qwenFragment, ...nested },
    { rel: PATHS.geminiSettings, agent: "Gemini CLI", fragmentFor: geminiFragment, ...nested },
    // Factory Droid reads the user's own settings only (user-hooks.ts): listed when the home directory is given
    ...(home ? [{ rel: "~/.factory/settings.json", path: join(home, ".factory", "settings.json"), agent: "Factory Droid", fragmentFor: droidFragment, ...nested }] : []),
  ];
}

/** One agent's hook file: where it is (repository-relative, or `path` outside), how to audit it, its fragment. */
export interface AgentHookFile {
  rel: string;
  path?: string;
  agent: string;
  fragmentFor: (bin: string) => HooksFragment;
  audit: typeof auditHooks;
  has: (text: string) => boolean;
}

/** GitHub Copilot CLI hooks in `.github/hooks/aiflare.json`. */
export function copilotHooksRule(root: string, binQuoted: string): FileRule {
  return {
    path: join(root, PATHS.copilotHooks),
    label: "Copilot CLI hooks",
    apply: (before) => mergeCopilotHooks(before, binQuoted, PATHS.copilotHooks),
    remove: (current) => removeCopilotHooks(current, PATHS.copilotHooks),
    hasOurs: hasCopilotHooks,
    empty: EMPTY_JSON,
  };
}

/**
 * aiflare's OpenCode plugin in `.opencode/plugins/aiflare.js`, calling the binary at `bin`. The whole file is
 * aiflare's: uninstall deletes it, or puts back a file of the same name that was there before.
 */
export function opencodePluginRule(root: string, bin: string): FileRule {
  const text = opencodePluginText(bin);
  return {
    path: join(root, PATHS.opencodePlugin),
    label: "OpenCode plugin",
    apply: () => text,
    remove: (_current, original) => original ?? null,
    hasOurs: (t) => t.startsWith(OPENCODE_PLUGIN_MARK),
  };
}

/** The context-capture skill (Claude Code's folder, or with `rel` another agent's). */
export function skillRule(root: string, binQuoted: string, rel: string = PATHS.skill): FileRule {
  const text = skillText(binQuoted);
  return {
    path: join(root, rel),
    label: "context-capture skill",
    apply: () => text,
    // A skill the user has edited since is theirs now: uninstall leaves it.
    remove: (current) => current,
    hasOurs: (t) => t.includes("name: context-capture") && t.includes("capture") && t.includes("--commit-hash"),
  };
}

/** The why skill: when to read the record back before changing code. */
export function whySkillRule(root: string, binQuoted: string, rel: string = PATHS.whySkill): FileRule {
  const text = whySkillText(binQuoted);
  return {
    path: join(root, rel),
    label: "why skill",
    apply: () => text,
    // A skill the user has edited since is theirs now: uninstall leaves it.
    remove: (current) => current,
    hasOurs: (t) => t.includes("name: why") && t.includes("why --json"),
  };
}

/** The one-line directive in CLAUDE.md, AGENTS.md or GEMINI.md, so subagents capture too. */
export function directiveRule(root: string, rel: typeof PATHS.claudeMd | typeof PATHS.agentsMd | typeof PATHS.geminiMd): FileRule {
  // Claude Code also reads .claude/CLAUDE.md: a mention there is enough.
  const elsewhere = rel === PATHS.claudeMd && mentionsSkill(readText(join(root, PATHS.claudeMdAlt)));
  return {
    path: join(root, rel),
    label: `${rel} directive`,
    apply: (before) => (elsewhere ? before : addDirective(before, DIRECTIVE_LINE)),
    remove: (current) => removeDirective(current, DIRECTIVE_LINE),
    hasOurs: (t) => t.split("\n").some((l) => l.replace(/\r$/, "") === DIRECTIVE_LINE),
    ambiguous: true,
  };
}

/**
 * `.context-capture/` and `aiflare.yml` in `.gitignore` (and `.claude/settings.local.json` when install creates it).
 * While an `aiflare.yml` exists (it may hold a key), uninstall keeps its ignore line, and with it the file.
 */
export function gitignoreRule(root: string, ignoreSettingsLocal = false): FileRule {
  const extra = ignoreSettingsLocal ? [SETTINGS_LOCAL_LINE] : [];
  const config = exists(join(root, CONFIG_FILE));
  return {
    path: join(root, PATHS.gitignore),
    label: `.gitignore lines .context-capture/, aiflare.yml${ignoreSettingsLocal ? ` and ${SETTINGS_LOCAL_LINE}` : ""}`,
    apply: (before) => addGitignoreLines(before, extra),
    remove: (current, original) => (original === undefined ? current : removeGitignoreLines(current, original, config ? [CONFIG_FILE] : [])),
    hasOurs: hasGitignoreLines,
    ambiguous: true,
    pinned: config ? `the ${CONFIG_FILE} line stays while ${CONFIG_FILE} exists` : undefined,
  };
}

/** True when something is at `path`, a dangling link included. */
function exists(path: string): boolean {
  try {
    lstatSync(path);
    return true;
  } catch {
    return false;
  }
}

/**
 * True when `--agent <chosen>` sets up `agent`: `all` sets up every agent whose hook file is the repository's own
 * (Factory Droid's hooks are the user's ~/.factory/settings.json: only with --factory-user-settings).
 */
export function installs(chosen: InstallAgent, agent: Exclude<InstallAgent, "all">): boolean {
  return chosen === agent || (chosen === "all" && agent !== "droid");
}

/** The rules install applies for the chosen agent(s), in the order they are reported. */
export function installRules(
  root: string,
  binQuoted: string,
  agent: InstallAgent,
  shared: boolean,
  ignoreSettingsLocal = false,
  geminiBin = binQuoted,
  bin = binQuoted,
): FileRule[] {
  const claude = installs(agent, "claude");
  const codex = installs(agent, "codex");
  const cursor = installs(agent, "cursor");
  const gemini = installs(agent, "gemini");
  const copilot = installs(agent, "copilot");
  const rules: FileRule[] = [];
  if (claude) rules.push(claudeSettingsRule(root, binQuoted, shared));
  if (codex) rules.push(codexHooksRule(root, binQuoted));
  if (cursor) rules.push(cursorHooksRule(root, binQuoted));
  if (installs(agent, "qwen")) rules.push(qwenSettingsRule(root, binQuoted));
  if (gemini) rules.push(geminiSettingsRule(root, geminiBin));
  if (copilot) rules.push(copilotHooksRule(root, binQuoted));
  if (agent === "opencode") rules.push(opencodePluginRule(root, bin));
  rules.push(skillRule(root, binQuoted));
  rules.push(whySkillRule(root, binQuoted));
  if (codex) rules.push(skillRule(root, binQuoted, PATHS.codexSkill), whySkillRule(root, binQuoted, PATHS.codexWhySkill));
  if (claude) rules.push(directiveRule(root, PATHS.claudeMd));
  // OpenCode reads AGENTS.md (and Claude Code's skills folder)
  if (codex || cursor || copilot || agent === "opencode") rules.push(directiveRule(root, PATHS.agentsMd));
  if (gemini) rules.push(directiveRule(root, PATHS.geminiMd));
  rules.push(gitignoreRule(root, ignoreSettingsLocal));
  return rules;
}

/** Every rule uninstall looks at, whatever install was run with. */
export function allRules(root: string, binQuoted: string): FileRule[] {
  return [
    claudeSettingsRule(root, binQuoted, false),
    claudeSettingsRule(root, binQuoted, true),
    codexHooksRule(root, binQuoted),
    cursorHooksRule(root, binQuoted),
    qwenSettingsRule(root, binQuoted),
    geminiSettingsRule(root, binQuoted),
    copilotHooksRule(root, binQuoted),
    // the plugin's text names the binary, but its removal does not depend on it
    opencodePluginRule(root, binQuoted),
    skillRule(root, binQuoted),
    whySkillRule(root, binQuoted),
    skillRule(root, binQuoted, PATHS.codexSkill),
    whySkillRule(root, binQuoted, PATHS.codexWhySkill),
    // The binary path only matters for "exactly what install made"; removal matches any aiflare server.
    mcpRule(root, binQuoted),
    directiveRule(root, PATHS.claudeMd),
    directiveRule(root, PATHS.agentsMd),
    directiveRule(root, PATHS.geminiMd),
    gitignoreRule(root),
  ];
}
