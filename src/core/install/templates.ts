/**
 * The files `install` writes, embedded into the binary so it needs nothing beside it.
 * `{{aiflare}}` stands for the shell-quoted absolute path of the binary, `{{hook}}` for a git hook name.
 */
import claudeSettings from "../../../hooks/claude-settings.json";
import codexHooks from "../../../hooks/codex-hooks.json";
import cursorHooks from "../../../hooks/cursor-hooks.json";
import qwenSettings from "../../../hooks/qwen-settings.json";
import droidSettings from "../../../hooks/droid-settings.json";
import geminiSettings from "../../../hooks/gemini-settings.json";
import directive from "../../../hooks/directive.md" with { type: "text" };
import gitHook from "../../../hooks/git-hook.sh" with { type: "text" };
import skill from "../../../hooks/SKILL.md" with { type: "text" };
import whySkill from "../../../hooks/why-SKILL.md" with { type: "text" };

/** One hook handler as written into a settings file. */
export interface HookHandlerSpec {
  type: "command";
  /** Gemini CLI: the name its hook trust is keyed by, with the command */
  name?: string;
  command: string;
  timeout?: number;
  if?: string;
}

/** A matcher group of an event: the shape Claude Code and Codex share. */
export interface HookGroupSpec {
  matcher?: string;
  hooks: HookHandlerSpec[];
}

/** `{ hooks: { Event: [group, …] } }` */
export interface HooksFragment {
  hooks: Record<string, HookGroupSpec[]>;
}

function fill(text: string, vars: Record<string, string>): string {
  return text.replace(/\{\{(\w+)\}\}/g, (m, k: string) => vars[k] ?? m);
}

function fillFragment(fragment: HooksFragment, bin: string): HooksFragment {
  return {
    hooks: Object.fromEntries(
      Object.entries(fragment.hooks).map(([event, groups]) => [
        event,
        groups.map((g) => ({ ...g, hooks: g.hooks.map((h) => ({ ...h, command: fill(h.command, { aiflare: bin }) })) })),
      ]),
    ),
  };
}

/** The Claude Code hooks aiflare installs, calling `bin` (already shell-quoted). */
export function claudeFragment(bin: string): HooksFragment {
  return fillFragment(claudeSettings as HooksFragment, bin);
}

/** The Codex hooks aiflare installs, calling `bin` (already shell-quoted). */
export function codexFragment(bin: string): HooksFragment {
  return fillFragment(codexHooks as HooksFragment, bin);
}

/**
 * The Cursor hooks aiflare installs, calling `bin` (already shell-quoted), in the matcher-group shape the merging
 * code shares: Cursor's flat `{command}` entries become groups of one (cursor-hooks.ts turns them back).
 */
export function cursorFragment(bin: string): HooksFragment {
  const flat = cursorHooks.hooks as Record<string, { command: string; timeout?: number }[]>;
  const nested: HooksFragment = { hooks: {} };
  for (const [event, handlers] of Object.entries(flat)) nested.hooks[event] = handlers.map((h) => ({ hooks: [h as HookHandlerSpec] }));
  return fillFragment(nested, bin);
}

/** The Qwen Code hooks aiflare installs (Claude-shaped, Qwen's tool names; timeouts in seconds), calling `bin`. */
export function qwenFragment(bin: string): HooksFragment {
  return fillFragment(qwenSettings as HooksFragment, bin);
}

/** The Factory Droid hooks aiflare installs in the user's `~/.factory/settings.json`, calling `bin`. */
export function droidFragment(bin: string): HooksFragment {
  return fillFragment(droidSettings as HooksFragment, bin);
}

/**
 * The Gemini CLI hooks aiflare installs, calling `bin` (already shell-quoted; see geminiCommandName). Timeouts are
 * in milliseconds there.
 */
export function geminiFragment(bin: string): HooksFragment {
  return fillFragment(geminiSettings as HooksFragment, bin);
}

/** The context-capture skill text. */
export function skillText(bin: string): string {
  return fill(skill, { aiflare: bin });
}

/** The why skill text: when and how the agent reads the record back. */
export function whySkillText(bin: string): string {
  return fill(whySkill, { aiflare: bin });
}

/** The one line added to CLAUDE.md / AGENTS.md (no newline). */
export const DIRECTIVE_LINE = directive.trim();

/** Marker that identifies aiflare's git hook wrapper. */
export const GIT_HOOK_MARKER = "# aiflare-git-hook:";

/** The git hook wrapper for `hook`, calling the binary at `binQuoted`. */
export function gitHookText(hook: string, binQuoted: string): string {
  return fill(gitHook, { aiflare: binQuoted, hook });
}
