import { defineCommand, type CommandDef } from "citty";
import { AGENT_EVENTS, AGENT_NAMES, type AgentEvent, type AgentName } from "../agents/types.ts";
import { describeError } from "../errors.ts";
import { agentArgs, writeOut } from "./_shared.ts";

function agentEventCommand(event: AgentEvent): CommandDef {
  return defineCommand({
    meta: { name: event, description: `Handle the agent's ${event} hook (payload on stdin)` },
    args: agentArgs,
    async run({ args }) {
      const { runAgentHook } = await import("../core/hook/runner.ts");
      const { readStdin } = await import("../core/hook/stdin.ts");
      const out = await runAgentHook({
        agent: (AGENT_NAMES as readonly string[]).includes(args.agent) ? (args.agent as AgentName) : "claude",
        event,
        stdin: () => readStdin(),
        env: process.env,
        cwd: process.cwd(),
      });
      await writeOut(out);
      process.exitCode = 0;
    },
  }) as CommandDef;
}

/** git's pre-push: `aiflare hook pre-push <remote> <url>`, ref lines on stdin; callable from a wrapper script. */
const prePush = defineCommand({
  meta: { name: "pre-push", description: "Handle git's pre-push hook (ref lines on stdin)" },
  args: {
    remote: { type: "positional", required: false, description: "Name of the remote" },
    url: { type: "positional", required: false, description: "URL of the remote" },
  },
  async run({ args }) {
    const { runPrePush } = await import("../core/sync/pre-push.ts");
    const { readStdin } = await import("../core/hook/stdin.ts");
    const remote = typeof args.remote === "string" ? args.remote : "";
    try {
      const result = await runPrePush({
        remote,
        url: typeof args.url === "string" ? args.url : remote,
        stdin: () => readStdin(),
        cwd: process.cwd(),
        env: process.env,
      });
      if (result.message) process.stderr.write(`${result.message}\n`);
      process.exitCode = result.exitCode;
    } catch (err) {
      // Only the deliberate refusal may block a push; anything unexpected lets it through.
      process.stderr.write(`aiflare: pre-push hook failed, push continues: ${describeError(err)}\n`);
      process.exitCode = 0;
    }
  },
}) as CommandDef;

/** git's post-rewrite hook: `aiflare hook post-rewrite <amend|rebase>`, `<old> <new>` lines on stdin. */
const postRewrite = defineCommand({
  meta: { name: "post-rewrite", description: "Move entries of amended or rebased commits (git hook)" },
  args: { kind: { type: "positional", required: false, description: "amend or rebase" } },
  async run({ args }) {
    const { readStdin } = await import("../core/hook/stdin.ts");
    const { runPostRewrite } = await import("../core/capture/rewrite.ts");
    try {
      const { text } = await readStdin();
      await runPostRewrite({ kind: args.kind, stdin: text, cwd: process.cwd() });
    } catch (err) {
      process.stderr.write(`aiflare: post-rewrite hook failed: ${describeError(err)}\n`);
    }
    process.exitCode = 0;
  },
}) as CommandDef;

/** git's post-merge hook: `aiflare hook post-merge <squash flag>`; links the commits a pull brought. */
const postMerge = defineCommand({
  meta: { name: "post-merge", description: "Link landed squash and rebase-merge commits a pull brought (git hook)" },
  args: { squash: { type: "positional", required: false, description: "1 for a merge --squash" } },
  async run({ args }) {
    try {
      const { runPostMerge } = await import("../core/links/landed.ts");
      await runPostMerge({ squashFlag: typeof args.squash === "string" ? args.squash : undefined, cwd: process.cwd() });
    } catch (err) {
      process.stderr.write(`aiflare: post-merge hook failed: ${describeError(err)}\n`);
    }
    process.exitCode = 0;
  },
}) as CommandDef;

export default defineCommand({
  meta: { name: "hook", description: "Entry points called by agent and git hooks", hidden: true },
  subCommands: {
    ...Object.fromEntries(AGENT_EVENTS.map((e) => [e, agentEventCommand(e)])),
    "pre-push": prePush,
    "post-rewrite": postRewrite,
    "post-merge": postMerge,
  },
});
