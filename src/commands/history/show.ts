import { defineCommand } from "citty";
import { cwdArgs, jsonArgs } from "../_shared.ts";
import { emit, pagerArgs, viewContext } from "./_view.ts";

export default defineCommand({
  meta: { name: "show", description: "Show one commit's whole entry and the conversation that led to it" },
  args: {
    commit: { type: "positional", description: "Commit (abbreviated hash, HEAD~1, a branch…)", required: true },
    ...jsonArgs,
    ...pagerArgs,
    ...cwdArgs,
  },
  async run({ args }) {
    const { historyShow } = await import("../../core/history/index.ts");
    await emit(await historyShow(args.commit, args, viewContext(args.cwd)), args);
  },
});
