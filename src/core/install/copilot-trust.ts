/**
 * GitHub Copilot CLI loads a repository's hooks (`.github/hooks/*.json`) only in a folder the user trusted: it
 * keeps those folders as `trustedFolders` in `$COPILOT_HOME/config.json` (default `~/.copilot`), a folder covering
 * its subfolders, and asks the first time `copilot` starts in an untrusted one. In `copilot -p` nobody is asked:
 * an untrusted repository's hooks are skipped without a word, unless COPILOT_ALLOW_ALL=true or
 * GITHUB_COPILOT_PROMPT_MODE_REPO_HOOKS=true is set.
 */
import { readFileSync } from "node:fs";
import { join, relative, isAbsolute } from "node:path";

/** Copilot's configuration directory: `$COPILOT_HOME`, else `~/.copilot`. */
export function copilotHome(env: Record<string, string | undefined>): string {
  return env.COPILOT_HOME || join(env.HOME ?? "", ".copilot");
}

/** Whether Copilot trusts `root` (the folder or one above it is in `trustedFolders`), and where that is kept. */
export function copilotTrusts(root: string, env: Record<string, string | undefined>): { trusted: boolean; configPath: string } {
  const configPath = join(copilotHome(env), "config.json");
  let folders: unknown;
  try {
    // the file opens with `//` comment lines
    const text = readFileSync(configPath, "utf8").replace(/^\s*\/\/.*$/gm, "");
    folders = (JSON.parse(text) as { trustedFolders?: unknown }).trustedFolders;
  } catch {
    return { trusted: false, configPath };
  }
  if (!Array.isArray(folders)) return { trusted: false, configPath };
  const trusted = folders.some((f) => {
    if (typeof f !== "string" || !isAbsolute(f)) return false;
    const rel = relative(f, root);
    return rel === "" || (!rel.startsWith("..") && !isAbsolute(rel));
  });
  return { trusted, configPath };
}
