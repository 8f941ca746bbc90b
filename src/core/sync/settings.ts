import { join } from "node:path";
import { CONFIG_FILE, maskKey, type AiflareConfig } from "../config.ts";
import type { RepoPaths } from "../repo.ts";

/** Why the backend settings are incomplete, in one line that says how to fix it; null when complete. */
export function configProblem(config: AiflareConfig): string | null {
  if (config.apiKey && config.endpoint) return null;
  const missing = [
    !config.apiKey ? "api_key (or AIFLARE_API_KEY)" : "",
    !config.endpoint ? "endpoint (or AIFLARE_ENDPOINT)" : "",
  ].filter(Boolean);
  return `No backend configured: set ${missing.join(" and ")} in ${CONFIG_FILE} at the repository root to enable sync.`;
}

/** Where the key and endpoint came from, for messages that say what to check. Shows only the key's last 4 characters. */
export function configHints(config: AiflareConfig): { keyHint: string; endpointHint: string } {
  return {
    keyHint: `${config.source.apiKey === "env" ? "AIFLARE_API_KEY" : `api_key in ${CONFIG_FILE}`} (key ${maskKey(config.apiKey ?? "")})`,
    endpointHint: config.source.endpoint === "env" ? "AIFLARE_ENDPOINT" : `endpoint in ${CONFIG_FILE}`,
  };
}

/** Directory for the pre-push hook's hand-over files. */
export function pushQueueDir(repo: RepoPaths): string {
  return join(repo.commonDir, "aiflare", "push");
}

/** The sync lock file of a repository. */
export function syncLockPath(repo: RepoPaths): string {
  return join(repo.commonDir, "aiflare", "sync.lock");
}
