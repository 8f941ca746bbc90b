/** Runs the real Codex CLI against a scripted Responses API, in a test repository with aiflare installed. */
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { binary, type RunResult, type TempRepo } from "../helpers.ts";
import { ensureAgent, runAgent } from "./install.ts";
import type { ModelServer } from "./model-server.ts";

/** ~/.codex/config.toml of the test HOME: the scripted provider, and this repository trusted as a project. */
export function codexHome(repo: TempRepo, server: ModelServer): void {
  mkdirSync(join(repo.home, ".codex"), { recursive: true });
  writeFileSync(
    join(repo.home, ".codex", "config.toml"),
    [
      `model = "gpt-5.1-codex"`,
      `model_provider = "scripted"`,
      ``,
      `[model_providers.scripted]`,
      `name = "scripted"`,
      `base_url = "${server.url}/v1"`,
      `wire_api = "responses"`,
      `env_key = "SCRIPTED_API_KEY"`,
      ``,
      `[projects."${repo.root}"]`,
      `trust_level = "trusted"`,
      ``,
    ].join("\n"),
  );
}

export function codexEnv(repo: TempRepo): Record<string, string> {
  return { ...repo.env, PATH: `${dirname(binary())}:${repo.env.PATH}`, SCRIPTED_API_KEY: "x" };
}

/** `codex exec <prompt>` (or `codex exec resume <id> <prompt>`) in the repository, without sandbox or approvals. */
export async function codexExec(repo: TempRepo, prompt: string, resume?: string): Promise<RunResult & { sessionId?: string }> {
  const args = resume ? ["exec", "resume", resume, prompt] : ["exec", prompt];
  const argv = [ensureAgent("codex"), args[0]!, "--dangerously-bypass-approvals-and-sandbox", "--skip-git-repo-check", ...args.slice(1)];
  const { code, stdout, stderr } = await runAgent(argv, repo.root, codexEnv(repo));
  const sessionId = /session id: ([0-9a-f-]{36})/.exec(stdout + stderr)?.[1];
  return { code, stdout, stderr, sessionId };
}
