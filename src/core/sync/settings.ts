import { createHash } from "node:crypto";
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

/** An endpoint as the sync state knows it: scheme and host lower-cased, no default port, no trailing slash. */
export function normalEndpoint(endpoint: string): string {
  try {
    const u = new URL(endpoint.trim());
    u.hash = "";
    return `${u.protocol}//${u.host}${u.pathname.replace(/\/+$/, "")}${u.search}`;
  } catch {
    return endpoint.trim().replace(/\/+$/, "");
  }
}

/**
 * The backend a configured sync sends to, as its sync state is kept: the normalised endpoint and the project the
 * key belongs to, named by a hash of the key (the key itself is never stored).
 */
export function syncTarget(config: { endpoint?: string; apiKey?: string }): { target: string; endpoint: string; project: string } | null {
  if (!config.endpoint || !config.apiKey) return null;
  const endpoint = normalEndpoint(config.endpoint);
  const project = `key-sha256:${createHash("sha256").update(config.apiKey).digest("hex").slice(0, 16)}`;
  return { target: `${endpoint} ${project}`, endpoint, project };
}

/** Directory for the pre-push hook's hand-over files. */
export function pushQueueDir(repo: RepoPaths): string {
  return join(repo.commonDir, "aiflare", "push");
}

/** The sync lock file of a repository. */
export function syncLockPath(repo: RepoPaths): string {
  return join(repo.commonDir, "aiflare", "sync.lock");
}
