#!/usr/bin/env bun
import { resolve } from "node:path";
import { defineCommand, runCommand, type CommandDef } from "citty";
import { resolveCommandLine, UsageError } from "./commands/_argv.ts";
import { useColor } from "./commands/_shared.ts";
import { AiflareError, describeError, describeExpectedFailure, errorDetails, unexpectedFailure } from "./errors.ts";
import { termSafe } from "./util/terminal.ts";
import { VERSION } from "./version.ts";

/** Exit code of a command line aiflare does not understand (unknown command or flag, missing argument). */
const EXIT_USAGE = 2;

const main: CommandDef = defineCommand({
  meta: {
    name: "aiflare",
    version: VERSION,
    description: "Keeps the why behind code written with AI coding agents",
    examples: ["install", "history --since 7d", "why src/app.ts:40-60", "help history list"],
  },
  subCommands: {
    install: () => import("./commands/install.ts").then((m) => m.default),
    capture: () => import("./commands/capture.ts").then((m) => m.default),
    history: () => import("./commands/history/index.ts").then((m) => m.default),
    why: () => import("./commands/why.ts").then((m) => m.default),
    sync: () => import("./commands/sync.ts").then((m) => m.default),
    pull: () => import("./commands/pull.ts").then((m) => m.default),
    export: () => import("./commands/export.ts").then((m) => m.default),
    ui: () => import("./commands/ui.ts").then((m) => m.default),
    serve: () => import("./commands/serve.ts").then((m) => m.default),
    redact: () => import("./commands/redact.ts").then((m) => m.default),
    doctor: () => import("./commands/doctor.ts").then((m) => m.default),
    uninstall: () => import("./commands/uninstall.ts").then((m) => m.default),
    mcp: () => import("./commands/mcp.ts").then((m) => m.default),
    import: () => import("./commands/import.ts").then((m) => m.default),
    help: defineCommand({
      meta: { name: "help", description: "Show the help of aiflare or of one command", examples: ["help history list"] },
      args: { command: { type: "positional", required: false, description: "A command, e.g. history list", valueHint: "command" } },
      run: ({ rawArgs }) => printHelp(rawArgs),
    }),
    version: defineCommand({
      meta: { name: "version", description: "Print aiflare's version" },
      run: () => void process.stdout.write(`${VERSION}\n`),
    }),
    hook: () => import("./commands/hook.ts").then((m) => m.default),
  },
});

/** citty colours some of its error texts; this takes the colour out. */
const ANSI_RE = /\x1b\[[0-9;]*m/g;

/** Prints the help of the command that `words` name (flags among them are ignored). */
async function printHelp(words: string[]): Promise<void> {
  let resolved;
  try {
    resolved = await resolveCommandLine(main, words, { followDefault: false });
  } catch (err) {
    if (!(err instanceof UsageError) || err.kind === "command") throw err;
    resolved = await resolveCommandLine(main, err.helpPath, { followDefault: false });
  }
  const { renderHelp } = await import("./commands/_help.ts");
  process.stdout.write(await renderHelp(resolved, { version: VERSION, color: useColor(process.stdout) }));
}

/** `aiflare history list: <message>. See "aiflare history list --help".` */
function usageLine(path: string[], message: string): string {
  const command = ["aiflare", ...path].join(" ");
  const text = message.replace(ANSI_RE, "").replace(/^[A-Z](?=[a-z])/, (c) => c.toLowerCase());
  return `${command}: ${text}${/[.?!]$/.test(text) ? "" : "."} See "${command} --help".\n`;
}

/** The directory the command works in: `--cwd`'s value when given. */
function workDir(argv: string[]): string {
  const i = argv.findIndex((a) => a === "--cwd" || a.startsWith("--cwd="));
  const value = i < 0 ? undefined : argv[i]!.startsWith("--cwd=") ? argv[i]!.slice(6) : argv[i + 1];
  return value ? resolve(value) : process.cwd();
}

/** The log file of the repository the command works in, if there is one. */
async function repoLog(argv: string[]): Promise<{ path: string; write(message: string): void } | undefined> {
  const { findRepo } = await import("./core/repo.ts");
  const { createLogger, logFilePath } = await import("./core/log.ts");
  const repo = findRepo(workDir(argv));
  if (!repo) return undefined;
  const logger = createLogger({ component: "cli", root: repo.root });
  return { path: logFilePath(repo.root), write: (m) => logger.log("error", m) };
}

/** Prints a failure as one line and returns the exit code. */
export async function report(err: unknown, argv: string[]): Promise<number> {
  // messages may quote outside text (a backend's answer, a file name): printed without control sequences
  const line = (text: string) => process.stderr.write(termSafe(`aiflare: ${text.replace(ANSI_RE, "")}\n`));
  if (err instanceof UsageError) {
    process.stderr.write(termSafe(usageLine(err.helpPath, err.message)));
    return EXIT_USAGE;
  }
  if (err instanceof AiflareError && err.data?.usage === true) {
    const path = await resolveCommandLine(main, argv).then((r) => r.path, () => []);
    process.stderr.write(termSafe(usageLine(path, err.message)));
    return EXIT_USAGE;
  }
  if (err instanceof Error && err.name === "CLIError") {
    // citty's own checks: a missing positional argument or an enum value it does not know
    const path = await resolveCommandLine(main, argv).then((r) => r.path, () => []);
    process.stderr.write(usageLine(path, err.message));
    return EXIT_USAGE;
  }
  if (err instanceof AiflareError) {
    const { ui } = await import("./commands/_ui.ts");
    ui.error(termSafe(err.message));
    return 1;
  }
  const expected = describeExpectedFailure(err);
  if (expected) {
    line(expected);
    return 1;
  }
  const log = await repoLog(argv).catch(() => undefined);
  log?.write(`unexpected error in "aiflare ${argv.join(" ").slice(0, 200)}": ${errorDetails(err)}`);
  line(unexpectedFailure(err, { debug: process.env.AIFLARE_DEBUG === "1", logPath: log?.path }));
  return 1;
}

/** The one top-level handler: checks the command line, runs it, prints errors and returns the exit code. */
export async function run(argv: string[]): Promise<number> {
  if (argv.length === 1 && (argv[0] === "--version" || argv[0] === "-v")) {
    process.stdout.write(`${VERSION}\n`);
    return 0;
  }
  const end = argv.indexOf("--");
  const options = end < 0 ? argv : argv.slice(0, end);
  const wantsHelp = argv.length === 0 || options.includes("--help") || options.includes("-h");
  try {
    if (wantsHelp) {
      await printHelp(argv.filter((a, i) => (end >= 0 && i >= end) || (a !== "--help" && a !== "-h")));
      return 0;
    }
    await resolveCommandLine(main, argv);
    await runCommand(main, { rawArgs: argv });
    return process.exitCode === undefined ? 0 : Number(process.exitCode);
  } catch (err) {
    // Agents and git call `aiflare hook …`; git's pre-push wrapper reads exit 1 as aiflare's deliberate refusal.
    // So no failure there, not even a bad argument from an older or newer hooks file, may exit non-zero.
    if (argv[0] === "hook") {
      const message = `${argv.slice(0, 2).join(" ")} failed: ${describeError(err).replace(ANSI_RE, "")}`;
      process.stderr.write(termSafe(`aiflare: ${message}\n`));
      (await repoLog(argv).catch(() => undefined))?.write(message);
      return 0;
    }
    return await report(err, argv);
  }
}

// Run from source (`bun src/cli.ts …`); the executable's entry, main.ts, calls `run` itself.
// Exit explicitly: a hook's stdin may still be held open by the caller.
if (import.meta.main) void run(process.argv.slice(2)).then((code) => process.exit(code));
