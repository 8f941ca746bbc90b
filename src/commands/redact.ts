import { defineCommand } from "citty";
import { AiflareError } from "../errors.ts";
import type { Finding } from "../redact/index.ts";
import { cwdArgs, jsonArgs, writeOut } from "./_shared.ts";

/** The path to read ("-" for stdin), after checking that a file was given and exists. */
async function inputPath(file: string, cwd: string): Promise<string> {
  if (file === "-") {
    if (process.stdin.isTTY) {
      process.stderr.write("aiflare redact: reading stdin; end with Ctrl-D (or give a file: aiflare redact <file>)\n");
    }
    return "-";
  }
  const { statSync } = await import("node:fs");
  const { resolve } = await import("node:path");
  const path = resolve(cwd, file);
  const st = statSync(path, { throwIfNoEntry: false });
  if (!st) throw new AiflareError("NOT_FOUND", `${file}: no such file (use - to read stdin)`);
  if (st.isDirectory()) throw new AiflareError("INVALID_ARGUMENT", `${file} is a directory; give a file (or - for stdin)`);
  return path;
}

export default defineCommand({
  meta: {
    name: "redact",
    description: "Print a file (or stdin) as aiflare would store it, secrets replaced",
    examples: ["redact notes.md", "git diff | aiflare redact --report"],
  },
  args: {
    file: { type: "positional", required: false, default: "-", description: "File to redact, or - for stdin", valueHint: "FILE|-" },
    report: { type: "boolean", description: "List what was found (kind and line) instead of the text; never prints a secret" },
    ...jsonArgs,
    ...cwdArgs,
  },
  async run({ args }) {
    const { readTextChunks, redactForDisplay } = await import("../core/redact.ts");
    const cwd = args.cwd ?? process.cwd();
    const path = await inputPath(args.file, cwd);
    // the text is written piece by piece as it is redacted; a piece that would be refused, and all after it, is not
    const printText = !args.report;
    const findings: Finding[] = [];
    let refused: Finding | undefined;
    let first = true;
    for await (const piece of redactForDisplay(readTextChunks(path), cwd)) {
      refused ??= piece.refused;
      for (const f of piece.findings) findings.push(f);
      if (refused && printText) break;
      if (printText) {
        const text = first ? piece.text : `\n${piece.text}`;
        await writeOut(args.json ? `${first ? '{"text":"' : ""}${JSON.stringify(text).slice(1, -1)}` : text);
      }
      first = false;
    }
    if (args.report) {
      if (args.json) await writeOut(`${JSON.stringify({ findings, ...(refused ? { refused } : {}) })}\n`);
      else {
        const rows = findings.map((f) => `line ${String(f.line).padStart(5)}  ${f.kind}\n`).join("");
        await writeOut(`${rows}${findings.length} finding${findings.length === 1 ? "" : "s"}\n`);
      }
    }
    if (refused) {
      throw new AiflareError(
        "REDACTION_REFUSED",
        `a ${refused.kind} (line ${refused.line}) survives redaction because redact.allow in aiflare.yml lets it through; ` +
          "aiflare would refuse to store this text. Remove that entry (hard secrets cannot be allowlisted)",
      );
    }
    if (args.json && printText) await writeOut(`","findings":${JSON.stringify(findings)}}\n`);
  },
});
