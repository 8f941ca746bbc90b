import type { ArgDef, ArgsDef, CommandDef } from "citty";
import { AGENT_NAMES } from "../agents/types.ts";
import { fstatSync, statSync } from "node:fs";

/**
 * citty's `defineCommand`, which only types a definition, without loading citty: for the commands that run without
 * it on a plain command line (_quick.ts).
 */
export function command<T extends ArgsDef = ArgsDef>(def: CommandDef<T>): CommandDef<T> {
  return def;
}

/** `--json`: machine-readable output. */
export const jsonArgs = {
  json: { type: "boolean", description: "Print JSON instead of text" },
} as const satisfies Record<string, ArgDef>;

/** `--cwd`: run as if started in another directory. */
export const cwdArgs = {
  cwd: { type: "string", description: "Run as if started in this directory", valueHint: "dir" },
} as const satisfies Record<string, ArgDef>;

/** `--agent`: which coding agent a hook or install is for. */
export const agentArgs = {
  agent: {
    type: "enum",
    options: [...AGENT_NAMES],
    default: "claude",
    description: "Which coding agent the payload comes from",
  },
} as const satisfies Record<string, ArgDef>;

/**
 * Writes to stdout and waits until it is written, so nothing is lost when the process exits right after.
 * Goes through Bun's file writer: `process.stdout` loads node's stream machinery (milliseconds per command).
 * A reader that went away (`| head`) ends the output quietly.
 */
export async function writeOut(text: string): Promise<void> {
  if (!text) return;
  try {
    await Bun.write(Bun.stdout, text);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "EPIPE") throw err;
  }
}

/** Whether stdout is a terminal, without loading node's tty module unless it is a character device other than /dev/null. */
export function stdoutIsTTY(): boolean {
  try {
    const st = fstatSync(1);
    if (!st.isCharacterDevice() || st.rdev === statSync("/dev/null").rdev) return false;
  } catch {
    return false;
  }
  return (require("node:tty") as typeof import("node:tty")).isatty(1);
}

/** Whether to colour what goes to `stream`: on a terminal unless NO_COLOR is set; FORCE_COLOR forces it. */
export function useColor(stream: { isTTY?: boolean }, env: Record<string, string | undefined> = process.env): boolean {
  const forced = env.FORCE_COLOR !== undefined && env.FORCE_COLOR !== "" && env.FORCE_COLOR !== "0";
  return forced || (Boolean(stream.isTTY) && !env.NO_COLOR);
}

/** One status line on stderr, redrawn in place while the work goes on and erased at the end; silent when `enabled` is false. */
export function statusLine(enabled: boolean) {
  let shown = false;
  return {
    show(text: string) {
      if (!enabled) return;
      process.stderr.write(`\r${text}\x1b[K`);
      shown = true;
    },
    end() {
      if (shown) process.stderr.write("\r\x1b[K");
    },
  };
}
