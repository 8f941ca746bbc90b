import { defineCommand } from "citty";
import { listArgs } from "./list.ts";

export default defineCommand({
  meta: {
    name: "history",
    description: "Browse the recorded why behind commits (list, show)",
    examples: ["history --tag BUGFIX --since 7d", "history show HEAD"],
  },
  args: listArgs,
  default: "list",
  subCommands: {
    list: () => import("./list.ts").then((m) => m.default),
    show: () => import("./show.ts").then((m) => m.default),
  },
});
