/**
 * `history list` and `capture` read a plain command line without citty (src/commands/_quick.ts): each such line
 * must mean exactly what citty makes of it, and every other line must be left to citty.
 */
import { describe, expect, test } from "bun:test";
import { parseArgs, type ArgsDef } from "citty";
import { quickArgs } from "../../src/commands/_quick.ts";
import capture from "../../src/commands/capture.ts";
import list, { listArgs } from "../../src/commands/history/list.ts";

const tables: [string, ArgsDef][] = [
  ["history list", listArgs as ArgsDef],
  ["capture", capture.args as ArgsDef],
];

/** citty's reading of `argv`, the declared flags only (it adds camelCase copies and `_`). */
function citty(defs: ArgsDef, argv: string[]): Record<string, unknown> {
  const parsed = parseArgs(argv, defs) as Record<string, unknown>;
  const out: Record<string, unknown> = { _: parsed._ };
  for (const name of Object.keys(defs)) if (parsed[name] !== undefined) out[name] = parsed[name];
  return out;
}

describe("a plain command line reads as citty reads it", () => {
  const plain: Record<string, string[][]> = {
    "history list": [
      [],
      ["--json"],
      ["--no-pager"],
      ["--tag", "BUGFIX,FEATURE", "--since", "7d"],
      ["--tag=BUGFIX", "--limit=0", "--grep", "retry later", "--file", "src/"],
      ["--session", "abc", "--author", "dev@example.com", "--until", "2026-11-29 10:00", "--cwd", "/tmp/x", "--json", "--no-pager"],
      ["--grep=a=b", "--limit", "5"],
    ],
    capture: [
      [],
      ["--commit-hash", "HEAD", "--tag", "BUGFIX", "--intent", "why\nand how"],
      ["--title=Retry uploads", "--json", "--changed-files", "a.ts, \"b c.ts\""],
      ["--alternatives", "none", "--diff-summary", "x", "--agent-type", "codex", "--claude-session-id", "s-1", "--cwd", "."],
      ["--conversation-snippet", '{"role":"user","content":"hi"}'],
    ],
  };
  for (const [name, defs] of tables) {
    for (const argv of plain[name]!) {
      test(`${name} ${argv.join(" ")}`, () => {
        const quick = quickArgs(defs, argv);
        expect(quick).toBeDefined();
        expect(quick as Record<string, unknown>).toEqual(citty(defs, argv));
      });
    }
  }
});

describe("any other command line is left to citty", () => {
  const other: string[][] = [
    ["--help"],
    ["-h"],
    ["--tagg", "BUGFIX"],
    ["--tag", "A", "--tag", "B"],
    ["--tag"],
    ["--tag="],
    ["--grep", "-x"],
    ["--json=false"],
    ["--no-json"],
    ["--pager"],
    ["--no-pager", "--no-pager"],
    ["stray"],
    ["--", "--json"],
    ["-j"],
    ["--commitHash", "HEAD"],
    ["--__proto__", "x"],
    ["--constructor"],
  ];
  for (const argv of other) {
    test(argv.join(" "), () => {
      for (const [, defs] of tables) expect(quickArgs(defs, argv)).toBeUndefined();
    });
  }

  test("a command with an enum, an alias or a positional is never read here", () => {
    expect(quickArgs({ agent: { type: "enum", options: ["a"] } }, [])).toBeUndefined();
    expect(quickArgs({ yes: { type: "boolean", alias: "y" } }, [])).toBeUndefined();
    expect(quickArgs({ commit: { type: "positional" } }, [])).toBeUndefined();
    expect(list.run).toBeFunction();
  });
});
