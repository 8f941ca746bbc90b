/**
 * The command line, checked before anything runs: which (sub)command argv names and whether every flag is one that
 * command declares. Works from each command's citty `args`, so a command added with `defineCommand` is covered
 * without doing anything.
 */
import type { ArgDef, ArgsDef, CommandDef, CommandMeta } from "citty";

declare module "citty" {
  interface CommandMeta {
    /** command lines shown under EXAMPLES in `--help` (without the leading `aiflare`) */
    examples?: string[];
  }
}

/** A command line that names no command or flag aiflare knows; printed as one line, exit 2. */
export class UsageError extends Error {
  /** the command whose `--help` the message points to, e.g. ["history", "list"] */
  readonly helpPath: string[];
  readonly kind: "command" | "option" | "argument";

  constructor(message: string, helpPath: string[], kind: "command" | "option" | "argument") {
    super(message);
    this.name = "UsageError";
    this.helpPath = helpPath;
    this.kind = kind;
  }
}

type Resolvable<T> = T | Promise<T> | (() => T) | (() => Promise<T>);

/** Resolves one of citty's lazy values (a command, its args, its subcommands, its meta). */
export async function resolveValue<T>(value: Resolvable<T>): Promise<T> {
  return typeof value === "function" ? await (value as () => T | Promise<T>)() : await value;
}

/** A command reached from the root, with the argv left for it. */
export interface ResolvedCommand {
  /** subcommand names from the root, e.g. ["history", "list"] */
  path: string[];
  cmd: CommandDef;
  meta: CommandMeta;
  args: ArgsDef;
  /** the arguments that belong to `cmd` (flags given to parents before the subcommand name are checked there) */
  rest: string[];
}

const camel = (name: string) => name.replace(/-([a-z0-9])/g, (_, c: string) => c.toUpperCase());

/** The declared flag (not positional) that `name` (without dashes) denotes, as citty matches names and aliases. */
function findFlag(args: ArgsDef, name: string): ArgDef | undefined {
  for (const [key, def] of Object.entries(args)) {
    if (def.type === "positional") continue;
    if (camel(key) === camel(name)) return def;
    const aliases = "alias" in def && def.alias !== undefined ? [def.alias].flat() : [];
    if (aliases.includes(name)) return def;
  }
  return undefined;
}

const takesValue = (def: ArgDef | undefined) => def?.type === "string" || def?.type === "enum";

/** Index of the first positional in `argv` (skipping flags and the values of value flags), or -1. */
function firstPositional(argv: string[], args: ArgsDef): number {
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i] as string;
    if (a === "--") return -1;
    if (a.startsWith("-") && a !== "-") {
      if (!a.includes("=") && takesValue(findFlag(args, a.replace(/^-{1,2}/, "")))) i++;
      continue;
    }
    return i;
  }
  return -1;
}

/** Optimal string alignment distance: edits, with a swap of neighbours counting as one. */
export function editDistance(a: string, b: string): number {
  const d: number[][] = Array.from({ length: a.length + 1 }, (_, i) => [i, ...Array<number>(b.length).fill(0)]);
  for (let j = 1; j <= b.length; j++) (d[0] as number[])[j] = j;
  for (let i = 1; i <= a.length; i++) {
    const row = d[i] as number[];
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      row[j] = Math.min((d[i - 1] as number[])[j]! + 1, row[j - 1]! + 1, (d[i - 1] as number[])[j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) {
        row[j] = Math.min(row[j]!, (d[i - 2] as number[])[j - 2]! + 1);
      }
    }
  }
  return (d[a.length] as number[])[b.length]!;
}

/** The candidate closest to `input` when it is close enough to be a typo of it (or `input` is a prefix of it). */
export function closest(input: string, candidates: string[]): string | undefined {
  const needle = input.toLowerCase();
  let best: string | undefined;
  let bestDistance = Infinity;
  for (const c of candidates) {
    const distance = c.startsWith(needle) && needle.length >= 2 ? 0.5 : editDistance(needle, c.toLowerCase());
    if (distance < bestDistance) [best, bestDistance] = [c, distance];
  }
  return bestDistance <= Math.max(2, Math.floor(needle.length / 3)) ? best : undefined;
}

async function visibleSubCommands(cmd: CommandDef): Promise<Record<string, CommandDef>> {
  const subs = cmd.subCommands === undefined ? {} : await resolveValue(cmd.subCommands);
  return subs as Record<string, CommandDef>;
}

/**
 * Walks argv down the subcommands the way citty will run it, checking every flag on the way.
 * Throws UsageError for an unknown command, an unknown flag or a stray argument.
 */
export async function resolveCommandLine(
  root: CommandDef,
  argv: string[],
  opts: { followDefault?: boolean } = {},
): Promise<ResolvedCommand> {
  const path: string[] = [];
  let cmd = root;
  let rest = argv;
  for (;;) {
    const args = (cmd.args === undefined ? {} : await resolveValue(cmd.args)) as ArgsDef;
    const meta = (cmd.meta === undefined ? {} : await resolveValue(cmd.meta)) as CommandMeta;
    const subs = await visibleSubCommands(cmd);
    const names = Object.keys(subs);
    if (names.length > 0) {
      const at = firstPositional(rest, args);
      if (at >= 0) {
        const name = rest[at] as string;
        checkFlags(args, rest.slice(0, at), path, false);
        const sub = subs[name];
        if (sub === undefined) {
          const shown: string[] = [];
          for (const n of names) if (!(await resolveValue((await resolveValue(subs[n] as CommandDef)).meta ?? {}))?.hidden) shown.push(n);
          const guess = closest(name, shown);
          throw new UsageError(
            `unknown command "${name}"${guess ? `; did you mean "${guess}"?` : ""}`,
            path,
            "command",
          );
        }
        path.push(name);
        cmd = await resolveValue(sub);
        rest = rest.slice(at + 1);
        continue;
      }
      if (cmd.default !== undefined && opts.followDefault !== false) {
        // `history --tag X` runs `history list --tag X`: the default subcommand gets the same arguments
        const name = await resolveValue(cmd.default);
        const sub = subs[name];
        if (sub !== undefined) {
          const subCmd = await resolveValue(sub);
          const subArgs = (subCmd.args === undefined ? {} : await resolveValue(subCmd.args)) as ArgsDef;
          checkFlags(subArgs, rest, path, true);
          return { path: [...path, name], cmd: subCmd, meta: (await resolveValue(subCmd.meta ?? {})) as CommandMeta, args: subArgs, rest };
        }
      }
    }
    checkFlags(args, rest, path, names.length === 0);
    return { path, cmd, meta, args, rest };
  }
}

/**
 * Throws UsageError for the first flag in `argv` that `args` does not declare (suggesting the closest one) and,
 * when `leaf` and the command takes no positional arguments, for a stray argument.
 */
export function checkFlags(args: ArgsDef, argv: string[], path: string[], leaf: boolean): void {
  const entries = Object.entries(args);
  const takesPositionals = entries.some(([, d]) => d.type === "positional");
  const longNames = entries.flatMap(([name, d]) => {
    if (d.type === "positional") return [];
    if (d.type === "boolean" && d.default === true) return [`no-${name}`];
    return [name];
  });
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i] as string;
    if (a === "--") break;
    if (a === "-" || !a.startsWith("-")) {
      if (leaf && !takesPositionals) throw new UsageError(`takes no argument "${a}"`, path, "argument");
      continue;
    }
    const long = a.startsWith("--");
    const body = a.slice(long ? 2 : 1);
    const name = body.split("=")[0] as string;
    let def = findFlag(args, name);
    if (!def && long && name.startsWith("no-")) {
      const positive = findFlag(args, name.slice(3));
      if (positive?.type === "boolean") continue;
    }
    if (!def && !long && name.length > 1) {
      // -abc: a bundle of one-letter boolean flags
      const flags = [...name].map((c) => findFlag(args, c));
      if (flags.every((f) => f?.type === "boolean")) continue;
      def = undefined;
    }
    if (!def) {
      const guess = closest(name.replace(/^-+/, ""), longNames);
      const suggestion = guess ? `; did you mean --${guess}?` : "";
      throw new UsageError(`unknown option ${a.split("=")[0]}${suggestion}`, path, "option");
    }
    if (takesValue(def) && !body.includes("=")) {
      if (i + 1 >= argv.length) throw new UsageError(`${a} needs a value`, path, "argument");
      i++;
    }
  }
}
