import { defineCommand } from "citty";
import { cwdArgs, jsonArgs, statusLine, useColor, writeOut } from "./_shared.ts";

export default defineCommand({
  meta: {
    name: "import",
    description: "Build timeline entries from agent sessions that happened before aiflare was installed",
    examples: ["import --dry-run", "import --since 30d --agent claude"],
  },
  args: {
    transcripts: {
      type: "positional",
      required: false,
      description: "Transcript files to import (default: this repository's sessions in each agent's own store or database, see the README)",
      valueHint: "transcript.jsonl",
    },
    since: { type: "string", description: "Only sessions and commits since then (2026-10-01, 30d)", valueHint: "when" },
    agent: {
      type: "string",
      description: "Which agent's sessions: claude, codex, gemini, copilot, qwen, cursor, droid, opencode or all",
      default: "all",
      valueHint: "agent",
    },
    "dry-run": { type: "boolean", description: "List the sessions and commits found; write nothing" },
    ...jsonArgs,
    ...cwdArgs,
  },
  async run({ args }) {
    const { AiflareError } = await import("../errors.ts");
    const { IMPORT_AGENTS, runImport } = await import("../core/import/index.ts");
    const agent = String(args.agent ?? "all").toLowerCase();
    if (agent !== "all" && !(IMPORT_AGENTS as string[]).includes(agent)) {
      throw new AiflareError("INVALID_ARGUMENT", `--agent ${args.agent}: use ${IMPORT_AGENTS.join(", ")} or all`);
    }
    const { formatImportSummary } = await import("../core/import/format.ts");
    const line = statusLine(process.stderr.isTTY === true && !args.json);
    const summary = await runImport({
      cwd: args.cwd ? String(args.cwd) : process.cwd(),
      env: process.env,
      agent: agent as (typeof IMPORT_AGENTS)[number] | "all",
      since: args.since === undefined ? undefined : String(args.since),
      dryRun: args["dry-run"] === true,
      paths: args._.map(String),
      onProgress: (p) => line.show(`Scanning sessions ${p.scanned}/${p.total} · ${p.matched} commits matched`),
    }).finally(line.end);
    if (args.json) await writeOut(`${JSON.stringify(summary, null, 2)}\n`);
    else await writeOut(formatImportSummary(summary, useColor(process.stdout)));
    if (summary.failed > 0) process.exitCode = 1;
  },
});
