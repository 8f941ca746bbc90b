/** How each agent type is named to people: shared by the terminal views and the dashboard page (no imports). */
export const AGENT_DISPLAY_NAMES: Readonly<Record<string, string>> = {
  CLAUDE_CODE: "Claude Code",
  CODEX: "Codex",
  GEMINI_CLI: "Gemini CLI",
  CURSOR: "Cursor",
  QWEN_CODE: "Qwen Code",
  FACTORY_DROID: "Factory Droid",
  COPILOT_CLI: "Copilot CLI",
  OPENCODE: "OpenCode",
};
