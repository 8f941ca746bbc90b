import { defineCommand } from "citty";
import { cwdArgs, jsonArgs } from "./_shared.ts";

export default defineCommand({
  meta: { name: "doctor", description: "Check the aiflare setup of this repository; exit 1 when something is broken" },
  args: {
    online: { type: "boolean", description: "Also check that the backend is reachable with the key" },
    ...jsonArgs,
    ...cwdArgs,
  },
  async run({ args }) {
    const { runDoctor, doctorContext } = await import("../core/install/doctor.ts");
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
        providers: {
          index: async (r) => {
            const { indexedTips } = await import("../store/index-db.ts");
            const tips = indexedTips(r.commonDir);
            return tips && { indexedTimelineHead: tips.timeline };
          },
          sync: async (r) => {
            const { loadConfig } = await import("../core/config.ts");
            const cfg = loadConfig(r.root);
            if (!cfg.apiKey || !cfg.endpoint) return null; // nothing is sent without a backend
            const { withIndex, pendingEntries, lastSyncError } = await import("../store/index-db.ts");
            return withIndex(r.commonDir, (db) => ({
              pending: pendingEntries(db).length,
              lastError: lastSyncError(db) ?? undefined,
            }));
          },
        },
      }),
    );
    console.log(args.json ? JSON.stringify(report, null, 2) : formatDoctor(report));
    if (!report.ok) process.exitCode = 1;
  },
});
