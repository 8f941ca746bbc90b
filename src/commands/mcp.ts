import { defineCommand } from "citty";
import { cwdArgs } from "./_shared.ts";

export default defineCommand({
  meta: {
    name: "mcp",
    description: "Serve the repository's recorded why to agents over MCP (stdio): tools why, search_history, show_entry",
    examples: ["mcp", "install --mcp"],
  },
  args: { ...cwdArgs },
  async run({ args }) {
    const { runMcpServer } = await import("../core/recall/mcp.ts");
    await runMcpServer(args.cwd ?? process.cwd());
  },
});
