import { defineCommand } from "citty";
import { termSafe } from "../util/terminal.ts";
import { cwdArgs } from "./_shared.ts";

export default defineCommand({
  meta: {
    name: "uninstall",
    description: "Remove exactly what aiflare install added (history kept unless --purge)",
    examples: ["uninstall --dry-run", "uninstall --purge"],
  },
  args: {
    "dry-run": { type: "boolean", description: "Print what would change without changing it" },
    purge: { type: "boolean", description: "Also delete the aiflare branches, the index and live session files" },
    yes: { type: "boolean", alias: "y", description: "Do not ask before purging" },
    "factory-user-settings": {
      type: "boolean",
      description: "Also take aiflare's Factory Droid hooks out of your ~/.factory/settings.json",
    },
    ...cwdArgs,
  },
  async run({ args }) {
    const { uninstall, purgeNeedsConfirmation } = await import("../core/install/uninstall.ts");
    const { formatUninstall } = await import("../core/install/format.ts");
    const report = await uninstall({
      cwd: args.cwd ?? process.cwd(),
      purge: args.purge,
      dryRun: args["dry-run"],
      async confirmPurge(what) {
        if (args.yes) return true;
        if (!process.stdin.isTTY) throw purgeNeedsConfirmation();
        // consola's prompt cannot be bundled into the bytecode build (it reads import.meta); readline is enough here.
        const { createInterface } = await import("node:readline/promises");
        const rl = createInterface({ input: process.stdin, output: process.stderr });
        try {
          const answer = await rl.question(`Delete for good: ${what.join(", ")}? [y/N] `);
          return /^y(es)?$/i.test(answer.trim());
        } finally {
          rl.close();
        }
      },
    });
    console.log(termSafe(formatUninstall(report)));
    if (args["factory-user-settings"] && !report.cancelled) {
      const { uninstallFactoryHooks } = await import("../core/install/user-hooks.ts");
      console.log(termSafe(uninstallFactoryHooks(process.env, report.dryRun)));
    }
  },
});
