/**
 * Runs a command and prints its wall time and peak resident memory as JSON ({ ms, peak } in ms and bytes), its
 * output discarded. A child's peak as the system reports it also counts the process it was started from, before
 * it became the command; so a large benchmark process starts commands through this small one.
 * Usage: bun bench/peak-rss.ts <command> [args...]
 */
const t0 = performance.now();
const r = Bun.spawnSync(process.argv.slice(2), { stdout: "ignore", stderr: "inherit" });
const ms = performance.now() - t0;
if (r.exitCode !== 0) process.exit(r.exitCode ?? 1);
console.log(JSON.stringify({ ms, peak: r.resourceUsage.maxRSS }));
