/**
 * `history [list]` and `capture` without citty. These commands print a screenful or record one entry and are done,
 * and citty (which loads node:util) costs them about a tenth of their time. A command line that is plain — every
 * word one of the command's own flags, once, in its long form (`--tag X`, `--tag=X`, `--json`, `--no-pager`) — is
 * read here as citty reads it (test/unit/quick-args.test.ts holds the two side by side) and runs the same `run`;
 * anything else (help, a typo, a repeated flag, a value starting with a dash) goes to the full CLI unchanged, which
 * checks, runs and reports it.
 */
import type { ArgsDef, CommandDef } from "citty";

/** The parsed flags handed to a command's `run` (citty's shape: positionals under `_`). */
export type QuickArgs = { _: string[] } & Record<string, string | boolean | string[]>;

/** `argv` read against `defs` the way citty reads it, or undefined when it is not plain enough to be read here. */
export function quickArgs(defs: ArgsDef, argv: string[]): QuickArgs | undefined {
  const out: QuickArgs = { _: [] };
  for (const name in defs) {
    const def = defs[name]!;
    if ((def.type !== "string" && def.type !== "boolean") || "alias" in def || def.required) return undefined;
    if (def.default !== undefined) out[name] = def.default;
  }
  const seen = new Set<string>();
  const declared = (name: string) => (Object.hasOwn(defs, name) ? defs[name] : undefined);
  for (let i = 0; i < argv.length; i++) {
    const word = argv[i]!;
    if (!word.startsWith("--")) return undefined;
    const eq = word.indexOf("=");
    const name = word.slice(2, eq < 0 ? undefined : eq);
    if (seen.has(name)) return undefined;
    seen.add(name);
    const def = declared(name);
    if (def?.type === "string") {
      const value = eq < 0 ? argv[++i] : word.slice(eq + 1);
      if (value === undefined || value === "" || value.startsWith("-")) return undefined;
      out[name] = value;
    } else if (eq >= 0) {
      return undefined;
    } else if (def?.type === "boolean" && def.default !== true) {
      out[name] = true;
    } else if (name.startsWith("no-") && declared(name.slice(3))?.type === "boolean" && declared(name.slice(3))?.default === true) {
      if (seen.has(name.slice(3))) return undefined;
      out[name.slice(3)] = false;
    } else {
      return undefined;
    }
  }
  return out;
}

const COMMANDS: Record<string, () => Promise<{ default: CommandDef }>> = {
  history: () => import("./history/list.ts") as Promise<{ default: CommandDef }>,
  capture: () => import("./capture.ts") as Promise<{ default: CommandDef }>,
};

/**
 * Runs `argv` when it is a plain `history`, `history list` or `capture` command line and returns its exit code;
 * undefined when the full CLI is to run it. A failure is thrown for the CLI's one error handler to report.
 */
export async function runQuick(argv: string[]): Promise<number | undefined> {
  const load = Object.hasOwn(COMMANDS, argv[0] ?? "") ? COMMANDS[argv[0]!] : undefined;
  if (!load) return undefined;
  // bare `history` runs its default subcommand, `list`, with the same flags
  const rest = argv[0] === "history" && argv[1] === "list" ? argv.slice(2) : argv.slice(1);
  const cmd = (await load()).default;
  const args = quickArgs((cmd.args ?? {}) as ArgsDef, rest);
  if (!args || typeof cmd.run !== "function") return undefined;
  await cmd.run({ rawArgs: rest, args, cmd } as never);
  return process.exitCode === undefined ? 0 : Number(process.exitCode);
}
