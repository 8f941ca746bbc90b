import { defineCommand } from "citty";
import { AGENT_NAMES } from "../agents/types.ts";
import { termSafe } from "../util/terminal.ts";
import type { InstallAgent } from "../core/install/targets.ts";
import { cwdArgs } from "./_shared.ts";

export default defineCommand({
  meta: {
    name: "install",
    description: "Set up aiflare's agent hooks, skill and git hooks in this repository",
    examples: ["install", "install --agent all --dry-run", "install --agent codex --approve-codex-hooks", "install --mcp"],
  },
  args: {
    agent: {
      type: "enum",
      options: [...AGENT_NAMES, "all"],
      default: "claude",
      description: "Which coding agent to set up (all: every agent whose hooks live in the repository; Factory Droid too with --factory-user-settings)",
    },
    shared: { type: "boolean", description: "Write .claude/settings.json (shared) instead of settings.local.json" },
    mcp: { type: "boolean", description: "Also register the aiflare MCP server (aiflare mcp) in the project's .mcp.json" },
    "approve-codex-hooks": {
      type: "boolean",
      description: "Codex: record your approval of aiflare's hooks in ~/.codex/config.toml, as Codex's hook review does",
    },
    "factory-user-settings": {
      type: "boolean",
      description: "Factory Droid: add aiflare's hooks to your ~/.factory/settings.json (user-level, every project)",
    },
    "dry-run": { type: "boolean", description: "Print what would change without writing" },
    ...cwdArgs,
  },
  async run({ args }) {
    const { install, approveInstalledCodexHooks } = await import("../core/install/install.ts");
    const { currentBinary } = await import("../core/install/binary.ts");
    const { formatInstall } = await import("../core/install/format.ts");
    const opts = {
      cwd: args.cwd ?? process.cwd(),
      agent: args.agent as InstallAgent,
      shared: args.shared,
      mcp: args.mcp,
      dryRun: args["dry-run"],
      binary: currentBinary(),
      approveCodexHooks: args["approve-codex-hooks"],
      factoryUserSettings: args["factory-user-settings"],
    };
    const report = await install(opts);
    console.log(termSafe(formatInstall(report)));
    if (opts.approveCodexHooks) console.log(termSafe(await approveInstalledCodexHooks(report, opts)));
  },
});
