import { join } from "node:path";
import type { AgentName } from "../agents/types.ts";
import type { AgentType } from "../store/entry.ts";

export type { AgentName } from "../agents/types.ts";
export { isValidSessionId } from "../util/ids.ts";

/** The `agentType` stored in entries for each agent. */
export const AGENT_TYPE: Record<AgentName, AgentType> = {
  claude: "CLAUDE_CODE",
  codex: "CODEX",
  cursor: "CURSOR",
  qwen: "QWEN_CODE",
  droid: "FACTORY_DROID",
  gemini: "GEMINI_CLI",
  copilot: "COPILOT_CLI",
  opencode: "OPENCODE",
};

/** The agent of an entry's `agentType` (Claude Code's files for one no hook writes, e.g. OTHER). */
export function agentOfType(type: AgentType | undefined): AgentName {
  for (const [agent, t] of Object.entries(AGENT_TYPE)) if (t === type) return agent as AgentName;
  return "claude";
}

/** The per-repository directory holding live conversation files. */
export const CONTEXT_DIR = ".context-capture";

/** The kinds of per-agent session files, named `.<agent>-<kind>-<session id>`. */
export const SESSION_FILE_KINDS = ["prompts", "offset", "conversation-delta", "recall", "secrets", "continues"] as const;

/** Any live session file in `.context-capture/`: a per-agent file or a pending-question marker. */
export const SESSION_FILE_RE = /^\.(?:[a-z]+-(?:prompts|offset|conversation-delta|recall|secrets|continues)|pending-question)-/;

/** Paths of one session's files in `<root>/.context-capture/` (SPEC §3). The id must already be validated. */
export function sessionFiles(root: string, agent: AgentName, sessionId: string) {
  const dir = join(root, CONTEXT_DIR);
  return {
    dir,
    prompts: join(dir, `.${agent}-prompts-${sessionId}`),
    offset: join(dir, `.${agent}-offset-${sessionId}`),
    delta: join(dir, `.${agent}-conversation-delta-${sessionId}`),
    pendingQuestion: join(dir, `.pending-question-${sessionId}`),
    /** the files recall already gave context for in this session, one repo-relative path a line */
    recall: join(dir, `.${agent}-recall-${sessionId}`),
    /** the secret values redaction found in this session, redacted wherever they are repeated (session-secrets.ts) */
    secrets: join(dir, `.${agent}-secrets-${sessionId}`),
    /** the earlier session this id continues (a compaction that started a new id): its id, one line */
    continues: join(dir, `.${agent}-continues-${sessionId}`),
  };
}

export type SessionFiles = ReturnType<typeof sessionFiles>;
