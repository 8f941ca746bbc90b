#!/usr/bin/env bun
import { defineCommand, runCommand, showUsage, type CommandDef } from "citty";
import { AiflareError } from "./errors.ts";
import { VERSION } from "./version.ts";

const main = defineCommand({
  meta: {
    name: "aiflare",
    version: VERSION,
    description: "Keeps the why behind code written with AI coding agents",
  },
  subCommands: {
    hook: () => import("./commands/hook.ts").then((m) => m.default),
    redact: () => import("./commands/redact.ts").then((m) => m.default),
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

/** The one top-level handler: prints errors and sets the exit code. */
async function run(argv: string[]): Promise<number> {
  if (argv.length === 1 && (argv[0] === "--version" || argv[0] === "-v")) {
    console.log(VERSION);
    return 0;
  }
  if (argv.length === 0 || argv.includes("--help") || argv.includes("-h")) {
    const [cmd, parent] = await resolveForUsage(main as CommandDef, argv);
    await showUsage(cmd, parent);
    return 0;
  }
  try {
    await runCommand(main as CommandDef, { rawArgs: argv });
    return process.exitCode === undefined ? 0 : Number(process.exitCode);
  } catch (err) {
    if (err instanceof AiflareError) {
      process.stderr.write(`aiflare: ${err.message}\n`);
      return 1;
    }
    if (err instanceof Error && err.name === "CLIError") {
      const [cmd, parent] = await resolveForUsage(main as CommandDef, argv);
      await showUsage(cmd, parent);
      process.stderr.write(`\naiflare: ${err.message}\n`);
      return 1;
    }
    process.stderr.write(`aiflare: unexpected error: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    return 1;
  }
}

// Exit explicitly: a hook's stdin may still be held open by the caller.
void run(process.argv.slice(2)).then((code) => process.exit(code));
