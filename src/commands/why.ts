import { defineCommand } from "citty";
import { cwdArgs, jsonArgs } from "./_shared.ts";
import { emit, pagerArgs, viewContext } from "./history/_view.ts";

export default defineCommand({
  meta: {
    name: "why",
    description: "Explain a file or lines: the commits behind them and why they were made",
    examples: ["why src/app.ts", "why src/app.ts:40-60 --limit 0", "why src/app.ts --blame"],
  },
  args: {
    target: { type: "positional", description: "A file, optionally with a line or a range: path, path:40, path:40-60", valueHint: "file[:line[-end]]", required: true },
    blame: { type: "boolean", description: "Every line of the file with its commit and the recorded request that wrote it" },
    limit: { type: "string", description: "How many commits to show, newest first (default: 5; 0 for all)", valueHint: "n" },
    ...jsonArgs,
    ...pagerArgs,
    ...cwdArgs,
  },
  async run({ args }) {
    const { why, whyBlame } = await import("../core/history/index.ts");
    const ctx = viewContext(args.cwd);
    await emit(await (args.blame ? whyBlame(args.target, args, ctx) : why(args.target, args, ctx)), args);
  },
});
