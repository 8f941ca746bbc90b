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
