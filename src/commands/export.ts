import { defineCommand } from "citty";
import { cwdArgs, writeOut } from "./_shared.ts";

export default defineCommand({
  meta: {
    name: "export",
    description: "Write the entries of a range of commits in an open format (Agent Trace records, one JSON per line)",
    examples: ["export --format agent-trace", "export --format agent-trace main..feature > trace.jsonl"],
  },
  args: {
    range: { type: "positional", required: false, description: "The commits to export, as git rev-list takes them (default: HEAD)", valueHint: "rev-range" },
    format: { type: "string", description: "The format: agent-trace (Agent Trace v0.1.0)", valueHint: "format", required: true },
    ...cwdArgs,
  },
  async run({ args }) {
    const { usageError } = await import("../errors.ts");
    if (args.format !== "agent-trace") throw usageError(`--format ${args.format}: the one format is agent-trace.`);
    const { exportAgentTrace } = await import("../core/export/agent-trace.ts");
    await exportAgentTrace(args.cwd ?? process.cwd(), args.range, writeOut);
  },
});
