import { defineCommand } from "citty";
import { termSafe } from "../util/terminal.ts";
import { cwdArgs, jsonArgs } from "./_shared.ts";

export default defineCommand({
  meta: {
    name: "doctor",
    description: "Check the aiflare setup of this repository; exit 1 when something is broken",
    examples: ["doctor", "doctor --online"],
  },
  args: {
    online: { type: "boolean", description: "Also check that the backend is reachable with the key" },
    ...jsonArgs,
    ...cwdArgs,
  },
  async run({ args }) {
    const { runDoctor, doctorContext, repositoryProviders } = await import("../core/install/doctor.ts");
    const { requireRepo } = await import("../core/install/install.ts");
    const { gitHooksDir } = await import("../core/install/git-hooks.ts");
    const { currentBinary } = await import("../core/install/binary.ts");
    const { formatDoctor } = await import("../core/install/format.ts");
    const { VERSION } = await import("../version.ts");
    const repo = requireRepo(args.cwd ?? process.cwd());
    const report = await runDoctor(
      doctorContext({
        repo,
        hooksDir: gitHooksDir(repo.root),
        binary: currentBinary(),
        version: VERSION,
        online: args.online ?? false,
        providers: repositoryProviders,
      }),
    );
    const width = process.stdout.isTTY ? process.stdout.columns || undefined : undefined;
    console.log(args.json ? JSON.stringify(report, null, 2) : termSafe(formatDoctor(report, width)));
    if (!report.ok) process.exitCode = 1;
  },
});
