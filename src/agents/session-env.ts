import type { AgentName } from "./types.ts";

/**
 * The variables an agent's shell tool exposes with the session id, in the order they are trusted: what
 * `aiflare capture` reads when the agent runs it without `--claude-session-id`. Claude Code's is exported by
 * aiflare's own SessionStart hook (CLAUDE_ENV_FILE), recent versions also set CLAUDE_CODE_SESSION_ID; Codex sets
 * CODEX_THREAD_ID (and CODEX_SESSION_ID) in every command it runs; GitHub Copilot CLI sets COPILOT_AGENT_SESSION_ID; aiflare's OpenCode plugin exports OPENCODE_SESSION_ID. An `idless` variable names only the agent (Gemini
 * CLI's shell gets GEMINI_CLI=1 and no session id): capture then takes the session whose hooks wrote last in the
 * repository (the newest prompts file of that agent).
 */
export const SESSION_ENV: { name: string; agent: AgentName; idless?: true }[] = [
  { name: "CLAUDE_SESSION_ID", agent: "claude" },
  { name: "CLAUDE_CODE_SESSION_ID", agent: "claude" },
  { name: "CODEX_THREAD_ID", agent: "codex" },
  { name: "CODEX_SESSION_ID", agent: "codex" },
  { name: "QWEN_CODE_SESSION_ID", agent: "qwen" },
  { name: "GEMINI_CLI", agent: "gemini", idless: true },
  { name: "COPILOT_AGENT_SESSION_ID", agent: "copilot" },
  // exported by aiflare's OpenCode plugin (its shell.env hook): OpenCode itself sets no session id in its shell
  { name: "OPENCODE_SESSION_ID", agent: "opencode" },
];

/**
 * The session named by the agent's shell environment, and which agent set it; undefined when none is set. `id` is
 * absent when the agent's shell says only which agent runs it.
 */
export function sessionFromEnv(env: Record<string, string | undefined>): { id?: string; agent: AgentName } | undefined {
  for (const v of SESSION_ENV) {
    const id = env[v.name];
    if (id) return v.idless ? { agent: v.agent } : { id, agent: v.agent };
  }
  return undefined;
}
