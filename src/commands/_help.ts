/**
 * `--help` text of any command, from its citty definition: the full command path in USAGE, options in the order
 * they are declared, defaults, examples (`meta.examples`), and no internal options.
 */
import type { ArgDef, ArgsDef, CommandDef } from "citty";
import { resolveValue, type ResolvedCommand } from "./_argv.ts";

const internalArgs = new WeakSet<object>();

/** Marks an argument as internal (for aiflare's own hooks): accepted, never shown in `--help`. */
export function internal<T extends ArgDef>(def: T): T {
  internalArgs.add(def);
  return def;
}

interface Style {
  heading(text: string): string;
  dim(text: string): string;
}

const plain: Style = { heading: (t) => t, dim: (t) => t };
const ansi: Style = { heading: (t) => `\x1b[1m${t}\x1b[22m`, dim: (t) => `\x1b[2m${t}\x1b[22m` };

function valueHint(def: ArgDef, name: string): string {
  if (def.type === "enum" && def.options?.length) return ` <${def.options.join("|")}>`;
  if (def.type === "string") return ` <${def.valueHint ?? name}>`;
  return "";
}

/** One row per option the user may pass: `--pager` (on by default) shows as `--no-pager`. */
function optionRows(args: ArgsDef): [string, string][] {
  const rows: [string, string][] = [];
  for (const [name, def] of Object.entries(args)) {
    if (def.type === "positional" || internalArgs.has(def)) continue;
    const aliases = "alias" in def && def.alias !== undefined ? [def.alias].flat().map((a) => `-${a}, `) : [];
    if (def.type === "boolean" && def.default === true) {
      rows.push([`--no-${name}`, def.negativeDescription ?? `Turn off: ${def.description ?? name}`]);
      continue;
    }
    const dflt = def.default !== undefined && def.type !== "boolean" ? ` (default: ${def.default})` : "";
    rows.push([`${aliases.join("")}--${name}${valueHint(def, name)}`, `${def.description ?? ""}${dflt}`]);
  }
  return rows;
}

function table(rows: [string, string][]): string {
  const width = Math.max(...rows.map(([left]) => left.length));
  return rows.map(([left, right]) => `  ${left.padEnd(width)}  ${right}`.trimEnd()).join("\n");
}

/** The help text of `resolved` (a command reached from the root). */
export async function renderHelp(resolved: ResolvedCommand, opts: { version: string; color: boolean }): Promise<string> {
  const s = opts.color ? ansi : plain;
  const { cmd, meta, args, path } = resolved;
  const full = ["aiflare", ...path].join(" ");
  const positionals = Object.entries(args).filter(([, d]) => d.type === "positional");
  const options = optionRows(args);
  const subs = cmd.subCommands === undefined ? {} : ((await resolveValue(cmd.subCommands)) as Record<string, CommandDef>);
  const commandRows: [string, string][] = [];
  for (const [name, sub] of Object.entries(subs)) {
    const subMeta = await resolveValue((await resolveValue(sub)).meta ?? {});
    if (!subMeta.hidden) commandRows.push([name, subMeta.description ?? ""]);
  }

  const usage = [full];
  if (commandRows.length > 0) usage.push(cmd.default !== undefined ? "[<command>]" : "<command>");
  if (options.length > 0) usage.push("[OPTIONS]");
  for (const [name, def] of positionals) {
    const label = (def.valueHint ?? name).toUpperCase();
    usage.push(def.required === false || def.default !== undefined ? `[${label}]` : `<${label}>`);
  }

  const out: string[] = [];
  out.push(path.length === 0 ? `${meta.description ?? ""} (aiflare ${opts.version})` : (meta.description ?? ""), "");
  out.push(`${s.heading("USAGE")}  ${usage.join(" ")}`, "");
  if (positionals.length > 0) {
    out.push(s.heading("ARGUMENTS"));
    out.push(
      table(
        positionals.map(([name, def]) => {
          const dflt = def.default !== undefined ? ` (default: ${def.default})` : "";
          return [(def.valueHint ?? name).toUpperCase(), `${def.description ?? ""}${dflt}`];
        }),
      ),
      "",
    );
  }
  if (commandRows.length > 0) {
    out.push(s.heading("COMMANDS"));
    const dflt = cmd.default !== undefined ? await resolveValue(cmd.default) : undefined;
    out.push(table(commandRows.map(([n, d]) => [n, n === dflt ? `${d} (default)` : d])), "");
  }
  if (options.length > 0) out.push(s.heading("OPTIONS"), table(options), "");
  if (meta.examples?.length) out.push(s.heading("EXAMPLES"), ...meta.examples.map((e) => `  aiflare ${e}`), "");
  if (commandRows.length > 0) out.push(s.dim(`Use "${full} <command> --help" for more about a command.`), "");
  return out.join("\n");
}
