import { command, cwdArgs, jsonArgs, writeOut } from "./_shared.ts";
import { termSafe } from "../util/terminal.ts";

// no citty here: a plain command line runs this without it (_quick.ts)
export default command({
  meta: {
    name: "capture",
    description: "Record the why of a commit on the aiflare timeline",
    examples: [
      'capture --tag BUGFIX --intent "Fix the off-by-one in paging: the last page was never shown"',
      'capture --commit-hash 1a2b3c4 --title "Retry uploads" --tag FEATURE',
    ],
  },
  args: {
    "commit-hash": { type: "string", description: "Commit to capture, full or abbreviated (default: HEAD)", valueHint: "hash" },
    title: { type: "string", description: "Work title (default: the commit subject)", valueHint: "text" },
    tag: { type: "string", description: "FEATURE, BUGFIX, REFACTORING, TEST or DOCS", valueHint: "tag" },
    intent: { type: "string", description: "Why: problem, solution, effect (markdown)", valueHint: "markdown" },
    alternatives: { type: "string", description: "Alternatives considered and why they were rejected (markdown)", valueHint: "markdown" },
    "diff-summary": { type: "string", description: "Per-file summary of the meaningful changes (markdown)", valueHint: "markdown" },
    "changed-files": { type: "string", description: "Comma-separated paths (default: the commit's changed paths)", valueHint: "paths" },
    "agent-type": { type: "string", description: "CLAUDE_CODE, CODEX, GEMINI_CLI, CURSOR or OTHER (default: the session's agent)", valueHint: "type" },
    "claude-session-id": { type: "string", description: "Agent session id (default: the agent's own: $CLAUDE_SESSION_ID, $CLAUDE_CODE_SESSION_ID, $CODEX_THREAD_ID)", valueHint: "id" },
    "conversation-snippet": { type: "string", description: "Conversation excerpt (JSONL) to store instead of the cut delta", valueHint: "jsonl" },
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
      for (const w of result.warnings) ui.warn(termSafe(w));
    }
    // the next session start's answer, saved in the background now that the timeline moved
    const { refreshStartAnswerLater } = await import("../core/recall/session-start.ts");
    try {
      refreshStartAnswerLater(args.cwd ?? process.cwd(), process.env);
    } catch {
      // the next session start computes it
    }
    const e = result.entry;
    await writeOut(
      args.json
        ? `${JSON.stringify(e, null, 2)}\n`
        : termSafe(`${result.created ? "Captured" : "Updated"} ${e.commitHash.slice(0, 12)} ${e.tag ?? "untagged"} "${e.title}" on aiflare/timeline/v1\n`),
    );
  },
});
