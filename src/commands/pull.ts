import { defineCommand } from "citty";
import { termSafe } from "../util/terminal.ts";
import { cwdArgs, jsonArgs } from "./_shared.ts";

/** Runs `aiflare pull` (also `sync --pull`): the team's entries into the local read-only cache. */
export async function runPull(args: { cwd?: string; json?: boolean }): Promise<void> {
  const { pullTeam } = await import("../core/team/index.ts");
  const { findRepo } = await import("../core/repo.ts");
  const { AiflareError } = await import("../errors.ts");
  const cwd = args.cwd ?? process.cwd();
  const repo = findRepo(cwd);
  if (!repo) throw new AiflareError("NOT_A_REPO", `${cwd} is not inside a git repository. Run aiflare from your project.`);
  const outcome = await pullTeam(repo, { env: process.env });
  if (args.json) console.log(JSON.stringify(outcome, null, 2));
  else console.log(termSafe(`Pulled ${outcome.entries} ${outcome.entries === 1 ? "entry" : "entries"} of the team from ${outcome.endpoint}: why answers with them offline.`));
}

export default defineCommand({
  meta: {
    name: "pull",
    description: "Copy the team's entries from the backend into a local read-only cache, so why knows them offline",
    examples: ["pull", "pull --json"],
  },
  args: { ...jsonArgs, ...cwdArgs },
  run: ({ args }) => runPull(args),
});
