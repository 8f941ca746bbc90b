import { defineCommand } from "citty";
import { cwdArgs, jsonArgs, writeOut } from "./_shared.ts";

export default defineCommand({
  meta: { name: "capture", description: "Record the why of a commit on the aiflare timeline" },
  args: {
    title: { type: "string", description: "Work title (default: the commit subject)" },
    intent: { type: "string", description: "Why: problem, solution, effect (markdown)" },
    "commit-hash": { type: "string", description: "Commit to capture, full or abbreviated (default: HEAD)" },
    "agent-type": { type: "string", description: "CLAUDE_CODE, CODEX, GEMINI_CLI or OTHER (default: CLAUDE_CODE)" },
    "changed-files": { type: "string", description: "Comma-separated paths (default: the commit's changed paths)" },
    tag: { type: "string", description: "FEATURE, BUGFIX, REFACTORING, TEST or DOCS" },
    alternatives: { type: "string", description: "Alternatives considered and why they were rejected (markdown)" },
    "diff-summary": { type: "string", description: "Per-file summary of the meaningful changes (markdown)" },
    "conversation-snippet": { type: "string", description: "Conversation excerpt (JSONL) to store instead of the cut delta" },
    "claude-session-id": { type: "string", description: "Agent session id (default: $CLAUDE_SESSION_ID, $CLAUDE_CODE_SESSION_ID)" },
    ...jsonArgs,
    ...cwdArgs,
  },
  async run({ args }) {
    const { runCapture } = await import("../core/capture/capture.ts");
    const result = await runCapture(
      {
        title: args.title,
        intent: args.intent,
        commitHash: args["commit-hash"],
        agentType: args["agent-type"],
        changedFiles: args["changed-files"],
        tag: args.tag,
        alternatives: args.alternatives,
        diffSummary: args["diff-summary"],
        conversationSnippet: args["conversation-snippet"],
        claudeSessionId: args["claude-session-id"],
      },
      { cwd: args.cwd ?? process.cwd(), env: process.env },
    );
    if (result.warnings.length) {
      // consola only when there is something to warn about: loading it costs milliseconds per capture
      const { ui } = await import("./_ui.ts");
      for (const w of result.warnings) ui.warn(w);
    }
    const e = result.entry;
    await writeOut(
      args.json
        ? `${JSON.stringify(e, null, 2)}\n`
        : `${result.created ? "Captured" : "Updated"} ${e.commitHash.slice(0, 12)} ${e.tag} "${e.title}" on aiflare/timeline/v1\n`,
    );
  },
});
