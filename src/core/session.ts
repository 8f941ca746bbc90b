import { join } from "node:path";
import type { AgentName } from "../agents/types.ts";
import type { AgentType } from "../store/entry.ts";

export type { AgentName } from "../agents/types.ts";
export { isValidSessionId } from "../util/ids.ts";

/** The `agentType` stored in entries for each agent. */
export const AGENT_TYPE: Record<AgentName, AgentType> = {
  claude: "CLAUDE_CODE",
  codex: "CODEX",
  copilot: "COPILOT_CLI",
};

/** The per-repository directory holding live conversation files. */
export const CONTEXT_DIR = ".context-capture";

/** The kinds of per-agent session files, named `.<agent>-<kind>-<session id>`. */
export const SESSION_FILE_KINDS = ["prompts", "offset", "conversation-delta", "recall", "secrets"] as const;

/** Any live session file in `.context-capture/`: a per-agent file or a pending-question marker. */
export const SESSION_FILE_RE = /^\.(?:(?:claude|codex|copilot)-(?:prompts|offset|conversation-delta|recall|secrets)|pending-question)-/;

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
  };
}

export type SessionFiles = ReturnType<typeof sessionFiles>;
