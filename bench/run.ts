/**
 * Runs every `bench/*.bench.ts` in turn (or those named on the command line). Each prints its own
 * medians and ratios against a baseline measured in the same process.
 */
import { readdirSync } from "node:fs";
import { join } from "node:path";

const only = process.argv.slice(2);
const files = readdirSync(import.meta.dir)
  .filter((f) => f.endsWith(".bench.ts"))
  .filter((f) => only.length === 0 || only.some((o) => f.startsWith(o)))
  // the goals table first
  .sort((a, b) => (a.startsWith("goals") ? -1 : b.startsWith("goals") ? 1 : a.localeCompare(b)));
let failed = 0;
for (const f of files) {
  console.log(`\n=== ${f.replace(".bench.ts", "")} ===`);
  const r = Bun.spawnSync(["bun", "run", join(import.meta.dir, f)], { stdout: "inherit", stderr: "inherit" });
  if (r.exitCode !== 0) failed++;
}
process.exit(failed ? 1 : 0);
