import type { ArgDef } from "citty";
import { command, cwdArgs, jsonArgs, writeOut } from "../_shared.ts";
import { emit, pagerArgs, viewContext } from "./_view.ts";

/** The filter flags of `history list` (also accepted by bare `history`). */
export const listArgs = {
  session: { type: "string", description: "Only this session (id or its first characters)", valueHint: "id" },
  author: { type: "string", description: "Only sessions of this person: part of the committer's name or email (any case)", valueHint: "who" },
  tag: { type: "string", description: "Only these tags: FEATURE, BUGFIX, REFACTORING, TEST, DOCS (comma-separated; default: all)", valueHint: "tag" },
  file: { type: "string", description: "Only commits that changed this file or anything under this directory", valueHint: "path" },
  grep: { type: "string", description: "Full-text search in titles, intent, alternatives, diff summaries and conversation", valueHint: "words" },
  since: { type: "string", description: "Captured at or after (2026-11-29, \"2026-11-29 10:00\", 7d, 12h)", valueHint: "when" },
  until: { type: "string", description: "Captured before (same forms; a bare date includes that day)", valueHint: "when" },
  limit: { type: "string", description: "Show at most this many entries, newest first (default: 100; 0 for all; --json shows all)", valueHint: "n" },
  ...jsonArgs,
  ...pagerArgs,
  ...cwdArgs,
} as const satisfies Record<string, ArgDef>;

// no citty here: a plain command line runs this without it (_quick.ts)
export default command({
  meta: {
    name: "list",
    description: "Show recorded entries, grouped by agent session (newest first)",
    examples: ["history list --tag BUGFIX,FEATURE --since 7d", 'history list --file src/ --grep "retry"'],
  },
  args: listArgs,
  async run({ args }) {
    const { historyList } = await import("../../core/history/list.ts");
    // JSON goes out as it is read; text is paged.
    await emit(await historyList(args, viewContext(args.cwd), args.json ? writeOut : undefined), args);
  },
});
