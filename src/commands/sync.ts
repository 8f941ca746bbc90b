import { defineCommand } from "citty";
import { termSafe } from "../util/terminal.ts";
import { internal } from "./_help.ts";
import { cwdArgs, jsonArgs, statusLine } from "./_shared.ts";

/** A progress line on stderr when it is a terminal: count and rate. */
function progressLine(enabled: boolean) {
  const started = performance.now();
  const line = statusLine(enabled);
  return {
    update(done: number, total: number) {
      if (total <= 20) return;
      const rate = done / Math.max(0.001, (performance.now() - started) / 1000);
      line.show(`Sending entries ${done}/${total} (${Math.round(rate)}/s)`);
    },
    end: line.end,
  };
}

export default defineCommand({
  meta: {
    name: "sync",
    description: "Send captured entries and their sessions to the backend",
    examples: ["sync --dry-run", "sync HEAD HEAD~1 --all"],
  },
  args: {
    commits: { type: "positional", required: false, description: "Commits whose entries to send (default: all pending)", valueHint: "commit…" },
    all: { type: "boolean", description: "Send again what the backend already accepted" },
    "dry-run": { type: "boolean", description: "Show what would be sent; send nothing" },
    status: { type: "boolean", description: "Per backend: what is pending and when it last succeeded; send nothing" },
    pull: { type: "boolean", description: "Bring the team's entries into the local read-only cache instead of sending (as aiflare pull)" },
    ...jsonArgs,
    ...cwdArgs,
    // how the pre-push hook starts the background half
    "from-hook": internal({ type: "string", description: "Send the commits listed in this push-queue file" }),
  },
  async run({ args }) {
    const { syncFromHook, syncRepository } = await import("../core/sync/index.ts");
    const { formatSummary } = await import("../core/sync/format.ts");
    const cwd = args.cwd ?? process.cwd();
    if (args.pull) {
      const { runPull } = await import("./pull.ts");
      return runPull(args);
    }
    if (args.status) {
      const { syncStatusReport } = await import("../core/sync/index.ts");
      const { formatStatus } = await import("../core/sync/format.ts");
      const report = await syncStatusReport({ cwd, env: process.env });
      console.log(args.json ? JSON.stringify(report, null, 2) : termSafe(formatStatus(report.targets, report.problem)));
      return;
    }
    if (args["from-hook"] !== undefined) {
      // started detached by the pre-push hook: the outcome goes to the log file
      await syncFromHook({ cwd, env: process.env, commitsFile: args["from-hook"] });
      return;
    }
    const progress = progressLine(process.stderr.isTTY === true);
    const outcome = await syncRepository({
      cwd,
      env: process.env,
      commits: args._.map(String),
      all: args.all === true,
      dryRun: args["dry-run"] === true,
      onProgress: progress.update,
    }).finally(progress.end);
    const summary = outcome.summary;
    if (args.json) {
      const { status } = outcome;
      const target = outcome.status === "done" ? { endpoint: outcome.endpoint, key: outcome.key } : { message: outcome.message };
      console.log(JSON.stringify({ status, ...target, ...(summary ?? {}) }, null, 2));
    } else {
      // backend answers and stored titles come from outside: printed without control sequences
      if (outcome.status === "not-configured") console.log(termSafe(outcome.message));
      if (summary) {
        const target = outcome.status === "done" ? { endpoint: outcome.endpoint, key: outcome.key } : {};
        console.log(termSafe(formatSummary(summary, target)));
      }
    }
    if (summary && !summary.dryRun && summary.failed.length > 0) process.exitCode = 1;
  },
});
