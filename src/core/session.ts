import { join } from "node:path";
import type { AgentName } from "../agents/types.ts";

export type { AgentName } from "../agents/types.ts";
export { isValidSessionId } from "../util/ids.ts";

/** The `agentType` stored in entries for each agent. */
export const AGENT_TYPE: Record<AgentName, "CLAUDE_CODE" | "CODEX"> = { claude: "CLAUDE_CODE", codex: "CODEX" };

/** The per-repository directory holding live conversation files. */
export const CONTEXT_DIR = ".context-capture";

/** Paths of one session's files in `<root>/.context-capture/` (SPEC §3). The id must already be validated. */
export function sessionFiles(root: string, agent: AgentName, sessionId: string) {
  const dir = join(root, CONTEXT_DIR);
  return {
    dir,
    prompts: join(dir, `.${agent}-prompts-${sessionId}`),
    offset: join(dir, `.${agent}-offset-${sessionId}`),
    delta: join(dir, `.${agent}-conversation-delta-${sessionId}`),
    pendingQuestion: join(dir, `.pending-question-${sessionId}`),
  };
}

export type SessionFiles = ReturnType<typeof sessionFiles>;
