import { defineCommand } from "citty";
import { cwdArgs, jsonArgs } from "../_shared.ts";
import { emit, pagerArgs, viewContext } from "./_view.ts";

export default defineCommand({
  meta: {
    name: "show",
    description: "Show one commit's whole entry and the conversation that led to it",
    examples: ["history show HEAD", "history show 1a2b3c4 --json"],
  },
  args: {
    commit: { type: "positional", description: "Commit (abbreviated hash, HEAD~1, a branch…)", valueHint: "commit", required: true },
    ...jsonArgs,
    ...pagerArgs,
    ...cwdArgs,
  },
  async run({ args }) {
    const { historyShow } = await import("../../core/history/index.ts");
    await emit(await historyShow(args.commit, args, viewContext(args.cwd)), args);
  },
});
