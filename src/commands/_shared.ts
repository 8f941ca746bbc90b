import type { ArgDef } from "citty";

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
    options: ["claude", "codex"],
    default: "claude",
    description: "Which coding agent the payload comes from",
  },
} as const satisfies Record<string, ArgDef>;

/** Writes to stdout and waits for the flush, so nothing is lost when the process exits right after. */
export function writeOut(text: string): Promise<void> {
  if (!text) return Promise.resolve();
  return new Promise((resolve) => process.stdout.write(text, () => resolve()));
}

/** Whether to colour what goes to `stream`: on a terminal unless NO_COLOR is set; FORCE_COLOR forces it. */
export function useColor(stream: { isTTY?: boolean }, env: Record<string, string | undefined> = process.env): boolean {
  const forced = env.FORCE_COLOR !== undefined && env.FORCE_COLOR !== "" && env.FORCE_COLOR !== "0";
  return forced || (Boolean(stream.isTTY) && !env.NO_COLOR);
}
