#!/usr/bin/env bun
import { defineCommand, renderUsage, runCommand, type CommandDef } from "citty";
import { useColor } from "./commands/_shared.ts";
import { AiflareError, describeError } from "./errors.ts";
import { VERSION } from "./version.ts";

const main = defineCommand({
  meta: {
    name: "aiflare",
    version: VERSION,
    description: "Keeps the why behind code written with AI coding agents",
  },
  subCommands: {
    install: () => import("./commands/install.ts").then((m) => m.default),
    capture: () => import("./commands/capture.ts").then((m) => m.default),
    history: () => import("./commands/history/index.ts").then((m) => m.default),
    why: () => import("./commands/why.ts").then((m) => m.default),
    sync: () => import("./commands/sync.ts").then((m) => m.default),
    ui: () => import("./commands/ui.ts").then((m) => m.default),
    redact: () => import("./commands/redact.ts").then((m) => m.default),
    doctor: () => import("./commands/doctor.ts").then((m) => m.default),
    uninstall: () => import("./commands/uninstall.ts").then((m) => m.default),
    import: () => import("./commands/import.ts").then((m) => m.default),
    hook: () => import("./commands/hook.ts").then((m) => m.default),
  },
});

/** Resolves the (sub)command that argv names, for printing its usage. */
async function resolveForUsage(cmd: CommandDef, argv: string[]): Promise<[CommandDef, CommandDef | undefined]> {
  let parent: CommandDef | undefined;
  let current = cmd;
  for (const arg of argv) {
    if (arg.startsWith("-")) break;
    const subs = typeof current.subCommands === "function" ? await current.subCommands() : await current.subCommands;
    const next = subs?.[arg];
    if (!next) break;
    parent = current;
    current = (typeof next === "function" ? await next() : await next) as CommandDef;
  }
  return [current, parent];
}

/** citty colours its usage and error texts; this takes the colour out. */
const ANSI_RE = /\x1b\[[0-9;]*m/g;

/** Prints usage, in colour only where `useColor` allows it. */
async function printUsage(argv: string[], stream: NodeJS.WriteStream = process.stdout): Promise<void> {
  const [cmd, parent] = await resolveForUsage(main as CommandDef, argv);
  let text = await renderUsage(cmd, parent);
  if (!useColor(stream)) text = text.replace(ANSI_RE, "");
  stream.write(`${text}\n`);
}

/** The one top-level handler: prints errors and sets the exit code. */
async function run(argv: string[]): Promise<number> {
  if (argv.length === 1 && (argv[0] === "--version" || argv[0] === "-v")) {
    console.log(VERSION);
    return 0;
  }
  if (argv.length === 0 || argv.includes("--help") || argv.includes("-h")) {
    await printUsage(argv);
    return 0;
  }
  try {
    await runCommand(main as CommandDef, { rawArgs: argv });
    return process.exitCode === undefined ? 0 : Number(process.exitCode);
  } catch (err) {
    // Agents and git call `aiflare hook …`; git's pre-push wrapper reads exit 1 as aiflare's deliberate refusal.
    // So no failure there, not even a bad argument from an older or newer hooks file, may exit non-zero.
    if (argv[0] === "hook") {
      process.stderr.write(`aiflare: ${argv.slice(0, 2).join(" ")} failed: ${describeError(err).replace(ANSI_RE, "")}\n`);
      return 0;
    }
    if (err instanceof AiflareError) {
      const { ui } = await import("./commands/_ui.ts");
      ui.error(err.message);
      return 1;
    }
    if (err instanceof Error && err.name === "CLIError") {
      await printUsage(argv, process.stderr);
      process.stderr.write(`\naiflare: ${err.message.replace(ANSI_RE, "")}. See aiflare --help.\n`);
      return 1;
    }
    const { ui } = await import("./commands/_ui.ts");
    ui.error(`unexpected error: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
    return 1;
  }
}

// Exit explicitly: a hook's stdin may still be held open by the caller.
void run(process.argv.slice(2)).then((code) => process.exit(code));
