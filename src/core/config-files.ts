/**
 * Where the settings files are, and the recall settings when no file sets them: what the hooks can learn with
 * `node:fs` alone, before `config.ts` (its schema and YAML parser) is worth loading.
 */
import { existsSync, lstatSync, readFileSync } from "node:fs";
import { isAbsolute, join } from "node:path";

import type { RedactOptions } from "../redact/index.ts";
import type { Logger } from "./log.ts";

type Env = Record<string, string | undefined>;

/** The settings file at the repository root; git-ignored, since it may hold the API key. */
export const CONFIG_FILE = "aiflare.yml";

/** The user's own config file: `${XDG_CONFIG_HOME:-~/.config}/aiflare/config.yml`. */
export function userConfigPath(env: Env = process.env): string {
  const xdg = env.XDG_CONFIG_HOME;
  // node:os only without $HOME: loading it costs a session-start hook more than reading the settings
  const home = env.HOME || (import.meta.require("node:os") as typeof import("node:os")).homedir();
  const base = xdg && isAbsolute(xdg) ? xdg : join(home, ".config");
  return join(base, "aiflare", "config.yml");
}

/**
 * The redaction settings for a hook or capture: a broken aiflare.yml falls back to the defaults (and is logged).
 * Without a settings file (the user's or the repository's) they are the defaults, and `config.ts` stays unloaded.
 */
export async function redactOptionsFor(root: string, logger?: Logger): Promise<RedactOptions> {
  const absent = (path: string) => !lstatSync(path, { throwIfNoEntry: false });
  if (absent(userConfigPath()) && absent(join(root, CONFIG_FILE))) return { patterns: [], allow: [] };
  try {
    return (await import("./config.ts")).loadRedactConfig(root);
  } catch (err) {
    logger?.log("warn", `aiflare.yml ignored for redaction: ${(err as Error).message}`);
    return {};
  }
}

/** `recall:` (SPEC §11): `false` turns it all off; otherwise which parts run and how much text they may add. */
export interface RecallSettings {
  /** context on PreToolUse of a file-editing tool */
  edit: boolean;
  /** context on SessionStart (and the handoff after /clear) */
  sessionStart: boolean;
  /** the most characters one edit's context may take */
  maxChars: number;
  /** where the setting in effect was written, when not the defaults */
  from?: string;
}

export const RECALL_DEFAULTS: RecallSettings = { edit: true, sessionStart: true, maxChars: 1500 };

/** Recall turned off as a whole, by `recall: false` or `AIFLARE_RECALL=0`. */
export const RECALL_OFF: RecallSettings = { ...RECALL_DEFAULTS, edit: false, sessionStart: false };

/** The values of AIFLARE_RECALL that turn recall off (any case). */
const OFF_WORDS: ReadonlySet<string> = new Set(["0", "false", "off", "no"]);

/** True when `AIFLARE_RECALL` turns recall off for this environment. */
export function recallOffByEnv(env: Env): boolean {
  // a set rather than a regular expression: every session start asks, and a regular expression's first use costs more
  return OFF_WORDS.has((env.AIFLARE_RECALL ?? "").trim().toLowerCase());
}

/**
 * The recall settings when neither the repository's aiflare.yml nor the user's config file mentions `recall`
 * (or the environment turns it off); null when one does and `loadRecallSettings` must read it.
 */
export function recallWithoutFiles(root: string, env: Env): RecallSettings | null {
  if (recallOffByEnv(env)) return { ...RECALL_OFF, from: "AIFLARE_RECALL" };
  const mentions = (file: string) => {
    try {
      // looked for first: usually there is no such file, and a thrown ENOENT costs a hook more than the lookup
      return existsSync(file) && /^\s*recall\s*:/m.test(readFileSync(file, "utf8"));
    } catch {
      return false;
    }
  };
  return mentions(join(root, CONFIG_FILE)) || mentions(userConfigPath(env)) ? null : { ...RECALL_DEFAULTS };
}
