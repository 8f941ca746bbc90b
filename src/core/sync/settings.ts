import { join } from "node:path";
import { CONFIG_FILE, maskKey, userConfigPath, type AiflareConfig } from "../config.ts";
import type { RepoPaths } from "../repo.ts";
import { insecureEndpoint } from "./client.ts";

/** Why the backend settings are incomplete, in one line that says how to fix it; null when complete. */
export function configProblem(config: AiflareConfig): string | null {
  if (config.apiKey && config.endpoint) return null;
  const missing = [
    !config.apiKey ? "api_key (or AIFLARE_API_KEY)" : "",
    !config.endpoint ? "endpoint (or AIFLARE_ENDPOINT)" : "",
  ].filter(Boolean);
  const ignored = config.ignored.filter((i) => i.setting === "endpoint" || i.setting === "api_key" || i.setting === "everything");
  return (
    `No backend configured: set ${missing.join(" and ")} in ${CONFIG_FILE} at the repository root (untracked) or in ` +
    `${userConfigPath()} to enable sync.` +
    (ignored.length ? ` Ignored: ${ignored.map((i) => `${i.setting} in ${i.from}, since ${i.reason}`).join("; ")}.` : "")
  );
}

/** Where the key and endpoint came from, for messages that say what to check. Shows only the key's last 4 characters. */
export function configHints(config: AiflareConfig): { keyHint: string; endpointHint: string } {
  const from = (setting: string) => config.origins.find((o) => o.setting === setting)?.from;
  const where = (setting: string, envName: string) => {
    const f = from(setting);
    return f === undefined || f === envName ? envName : `${setting} in ${f}`;
  };
  return {
    keyHint: `${where("api_key", "AIFLARE_API_KEY")} (key ${maskKey(config.apiKey ?? "")})`,
    endpointHint: where("endpoint", "AIFLARE_ENDPOINT"),
  };
}

/** Why the configured endpoint may not be used (http:// to another machine without opt-in), or null. */
export function endpointProblem(config: AiflareConfig): string | null {
  if (!config.endpoint) return null;
  return insecureEndpoint(config.endpoint, config.allowInsecureHttp, configHints(config).endpointHint);
}

/** Directory for the pre-push hook's hand-over files. */
export function pushQueueDir(repo: RepoPaths): string {
  return join(repo.commonDir, "aiflare", "push");
}

/** The sync lock file of a repository. */
export function syncLockPath(repo: RepoPaths): string {
  return join(repo.commonDir, "aiflare", "sync.lock");
}
