/**
 * `bun run test:agents [--latest]`: the real-agent scenarios (test/agents) alone, against the pinned versions or,
 * with --latest, the newest published ones, so a change in an agent shows before users meet it.
 */
const latest = process.argv.includes("--latest");
const unknown = process.argv.slice(2).filter((a) => a !== "--latest");
if (unknown.length) {
  console.error(`test:agents: unknown argument ${unknown[0]} (only --latest)`);
  process.exit(2);
}
const env = { ...process.env, ...(latest ? { AIFLARE_AGENTS: "latest" } : {}) };
const run = (cmd: string[]) => Bun.spawnSync(cmd, { env, stdout: "inherit", stderr: "inherit" }).exitCode ?? 1;
let code = run(["bun", "run", "build"]);
if (code === 0) code = run(["bun", "test/agents/install.ts"]);
if (code === 0) code = run(["bun", "test", "test/agents"]);
process.exit(code);
