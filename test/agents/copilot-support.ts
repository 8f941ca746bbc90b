/** Runs the real GitHub Copilot CLI against a scripted Chat Completions API (BYOK), in a test repository. */
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { binary, type RunResult, type TempRepo } from "../helpers.ts";
import { ensureAgent, runAgent } from "./install.ts";
import type { ModelServer } from "./model-server.ts";

/**
 * The environment of a `copilot` run: the scripted provider, offline, no update check. The client unpacks itself
 * into the cache directory on first start (some 200 MB): one cache beside the installed client serves every test.
 */
export function copilotEnv(repo: TempRepo, server: ModelServer): Record<string, string> {
  const cache = join(dirname(ensureAgent("copilot")), "..", "..", "cache");
  mkdirSync(cache, { recursive: true });
  return {
    ...repo.env,
    PATH: `${dirname(binary())}:${repo.env.PATH}`,
    XDG_CACHE_HOME: cache,
    COPILOT_AUTO_UPDATE: "false",
    COPILOT_OFFLINE: "true",
    COPILOT_PROVIDER_BASE_URL: `${server.url}/v1`,
    COPILOT_PROVIDER_API_KEY: "x",
    COPILOT_MODEL: "gpt-4.1",
  };
}

/** Trusts the repository in the test HOME's Copilot config, as Copilot's own trust dialog records it. */
export function trustFolder(repo: TempRepo): void {
  const path = join(repo.home, ".copilot", "config.json");
  mkdirSync(dirname(path), { recursive: true });
  let config: Record<string, unknown> = {};
  try {
    config = JSON.parse(readFileSync(path, "utf8").replace(/^\s*\/\/.*$/gm, ""));
  } catch {
    // no config yet
  }
  writeFileSync(path, `${JSON.stringify({ ...config, trustedFolders: [repo.root] }, null, 2)}\n`);
}

/** `copilot -p <prompt>` (with `--continue`, the last session again) in the repository, every tool and path allowed (aiflare itself is outside the repository). */
export async function copilotRun(repo: TempRepo, env: Record<string, string>, prompt: string, resume = false): Promise<RunResult & { sessionId?: string }> {
  const argv = [ensureAgent("copilot"), "--allow-all-tools", "--allow-all-paths", ...(resume ? ["--continue"] : []), "-p", prompt];
  const { code, stdout, stderr } = await runAgent(argv, repo.root, env);
  const sessionId = /--resume=([0-9a-f-]{36})/.exec(stdout + stderr)?.[1];
  return { code, stdout, stderr, sessionId };
}
