/**
 * Factory Droid reads hooks from the user's own `~/.factory/settings.json`, which applies to every project the user
 * opens. aiflare writes there only when the user asks for it on the command line, keeps the file's version from
 * before (next to it, `settings.json.aiflare-backup`) and takes out exactly its own hooks again.
 */
import { existsSync, mkdirSync, rmSync } from "node:fs";
import { dirname, join } from "node:path";
import { AiflareError } from "../../errors.ts";
import { atomicWrite } from "../fsutil.ts";
import { readText } from "./files.ts";
import { mergeHooks, removeHooks } from "./hooks-json.ts";
import { droidFragment } from "./templates.ts";

/** The command-line flag that is the user's consent to edit their Factory settings. */
export const FACTORY_CONSENT_FLAG = "--factory-user-settings";

const LABEL = "~/.factory/settings.json";

/** The user's Factory settings file. */
export function factorySettingsPath(env: Record<string, string | undefined>): string {
  if (!env.HOME) throw new AiflareError("CONFIG", "HOME is not set, so ~/.factory/settings.json cannot be found");
  return join(env.HOME, ".factory", "settings.json");
}

const backupOf = (path: string) => `${path}.aiflare-backup`;
const createdOf = (path: string) => `${path}.aiflare-created`;

/** Adds aiflare's Droid hooks to the user's Factory settings (or says what it would do); returns one line. */
export function installFactoryHooks(binQuoted: string, env: Record<string, string | undefined>, dryRun: boolean): string {
  const path = factorySettingsPath(env);
  const before = readText(path);
  const after = mergeHooks(before, droidFragment(binQuoted), LABEL);
  if (after === before) return `Factory Droid: aiflare's hooks are already in ${path}`;
  if (dryRun) return `Factory Droid: would add aiflare's hooks to ${path} (user-level: Droid runs them in every project)`;
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  // the version from before aiflare is kept once: a later install only updates aiflare's own part
  if (before === null) {
    if (!existsSync(backupOf(path))) atomicWrite(createdOf(path), "", 0o600);
  } else if (!existsSync(backupOf(path)) && !existsSync(createdOf(path))) atomicWrite(backupOf(path), before, 0o600);
  atomicWrite(path, after);
  return `Factory Droid: added aiflare's hooks to ${path} (user-level: Droid runs them in every project; the previous version is kept beside it)`;
}

/** Takes aiflare's Droid hooks out of the user's Factory settings: the file as it was when nothing else changed. */
export function uninstallFactoryHooks(env: Record<string, string | undefined>, dryRun: boolean): string {
  const path = factorySettingsPath(env);
  const current = readText(path);
  if (current === null) return `Factory Droid: ${path} does not exist; nothing to take out`;
  const backup = readText(backupOf(path));
  const created = existsSync(createdOf(path));
  const removed = removeHooks(current, LABEL);
  if (removed === current) return `Factory Droid: ${path} holds none of aiflare's hooks`;
  if (dryRun) return `Factory Droid: would take aiflare's hooks out of ${path}`;
  // nothing but aiflare's part changed since install: the file goes back byte for byte
  if (backup !== null && removed !== null && sameJson(removed, backup)) {
    atomicWrite(path, backup);
  } else if (removed === null && created) rmSync(path, { force: true });
  else atomicWrite(path, removed ?? "{}\n");
  rmSync(backupOf(path), { force: true });
  rmSync(createdOf(path), { force: true });
  return `Factory Droid: took aiflare's hooks out of ${path}`;
}

function sameJson(a: string, b: string): boolean {
  try {
    return JSON.stringify(JSON.parse(a)) === JSON.stringify(JSON.parse(b));
  } catch {
    return false;
  }
}
