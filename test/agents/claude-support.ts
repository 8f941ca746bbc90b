/** Runs the real Claude Code against a scripted model server, in a test repository with aiflare installed. */
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { binary, runBin, type RunResult, type TempRepo } from "../helpers.ts";
import { ensureAgent, runAgent } from "./install.ts";
import type { ModelServer } from "./model-server.ts";

/** Settles Claude Code's first-run questions in the test HOME, as a user who already said yes would have. */
export function settleClaudeHome(repo: TempRepo): void {
  mkdirSync(join(repo.home, ".claude"), { recursive: true });
  writeFileSync(join(repo.home, ".claude", "settings.json"), JSON.stringify({ skipDangerousModePermissionPrompt: true }));
  writeFileSync(
    join(repo.home, ".claude.json"),
    JSON.stringify({
      hasCompletedOnboarding: true,
      bypassPermissionsModeAccepted: true,
      customApiKeyResponses: { approved: ["x"], rejected: [] },
      projects: { [repo.root]: { hasTrustDialogAccepted: true, allowedTools: [] } },
    }),
  );
}

/** The environment Claude Code runs in: the repository's test env, the model server, aiflare on PATH. */
export function claudeEnv(repo: TempRepo, server: ModelServer): Record<string, string> {
  return {
    ...repo.env,
    PATH: `${dirname(binary())}:${repo.env.PATH}`,
    ANTHROPIC_BASE_URL: server.url,
    ANTHROPIC_API_KEY: "x",
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
    DISABLE_AUTOUPDATER: "1",
    // bypass mode is refused to root outside a sandbox
    IS_SANDBOX: "1",
  };
}

/** `claude -p <prompt>` in the repository (extra args e.g. `--resume <id>`), bypassing permission prompts. */
export async function claudePrint(repo: TempRepo, server: ModelServer, prompt: string, extra: string[] = []): Promise<RunResult> {
  const argv = [ensureAgent("claude"), "-p", prompt, "--permission-mode", "bypassPermissions", ...extra];
  return runAgent(argv, repo.root, claudeEnv(repo, server));
}

/** `aiflare install` for Claude Code in the repository, as a user runs it. */
export async function installAiflare(repo: TempRepo, args: string[] = []): Promise<void> {
  const r = await runBin(["install", ...args], { cwd: repo.root, env: repo.env });
  if (r.code !== 0) throw new Error(`aiflare install failed: ${r.stderr}`);
}
