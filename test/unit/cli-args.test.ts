/** The command-line check: every flag a command does not declare is refused, with the closest one suggested. */
import { describe, expect, test } from "bun:test";
import { defineCommand, type CommandDef } from "citty";
import { closest, resolveCommandLine, UsageError } from "../../src/commands/_argv.ts";
import { renderHelp, internal } from "../../src/commands/_help.ts";

const leaf = defineCommand({
  meta: { name: "sync", description: "Send", examples: ["sync --dry-run"] },
  args: {
    commits: { type: "positional", required: false },
    "dry-run": { type: "boolean", description: "Show only" },
    limit: { type: "string", description: "How many", valueHint: "n" },
    yes: { type: "boolean", alias: "y" },
    pager: { type: "boolean", default: true, negativeDescription: "Print straight" },
    "from-hook": internal({ type: "string", description: "internal" }),
  },
}) as CommandDef;
const noArgs = defineCommand({ meta: { name: "doctor" }, args: { online: { type: "boolean" } } }) as CommandDef;
const group = defineCommand({
  meta: { name: "history" },
  args: { tag: { type: "string" } },
  default: "list",
  subCommands: {
    list: defineCommand({ meta: { name: "list" }, args: { tag: { type: "string" } } }) as CommandDef,
    show: () => defineCommand({ meta: { name: "show" }, args: { commit: { type: "positional" } } }) as CommandDef,
  },
}) as CommandDef;
const root = defineCommand({
  meta: { name: "aiflare" },
  subCommands: { sync: () => Promise.resolve(leaf), doctor: noArgs, history: group, hook: defineCommand({ meta: { hidden: true } }) },
}) as CommandDef;

async function usageError(argv: string[]): Promise<UsageError> {
  try {
    await resolveCommandLine(root, argv);
  } catch (err) {
    if (err instanceof UsageError) return err;
    throw err;
  }
  throw new Error(`accepted: ${argv.join(" ")}`);
}

describe("resolveCommandLine", () => {
  test.each([
    [["sync", "--dry-run"], ["sync"]],
    [["sync", "--dryRun", "HEAD", "HEAD~1"], ["sync"]],
    [["sync", "--limit", "--weird-value"], ["sync"]],
    [["sync", "--limit=3", "-y", "--no-pager", "--pager"], ["sync"]],
    [["sync", "--from-hook", "f", "--", "--not-a-flag"], ["sync"]],
    [["history", "--tag", "BUGFIX"], ["history", "list"]],
    [["history", "show", "HEAD"], ["history", "show"]],
    [["doctor", "--online", "--no-online"], ["doctor"]],
  ])("accepts %p", async (argv, path) => {
    expect((await resolveCommandLine(root, argv)).path).toEqual(path);
  });

  test.each([
    [["sync", "--dryrun"], 'unknown option --dryrun; did you mean --dry-run?'],
    [["sync", "--dryrn"], "did you mean --dry-run?"],
    [["sync", "--no-limit"], "unknown option --no-limit"],
    [["sync", "--pagr"], "unknown option --pagr"],
    [["sync", "-x"], "unknown option -x"],
    [["sync", "--limit"], "--limit needs a value"],
    [["history", "--tagg", "X"], "did you mean --tag?"],
    [["history", "list", "--tagg", "X"], "did you mean --tag?"],
    [["doctor", "now"], 'takes no argument "now"'],
    [["--bogus", "sync"], "unknown option --bogus"],
  ])("refuses %p", async (argv, message) => {
    const err = await usageError(argv);
    expect(err.message).toContain(message);
  });

  test("a mistyped command names the closest visible one, never a hidden one", async () => {
    expect((await usageError(["histroy"])).message).toBe('unknown command "histroy"; did you mean "history"?');
    const sub = await usageError(["history", "lst"]);
    expect(sub.message).toBe('unknown command "lst"; did you mean "list"?');
    expect(sub.helpPath).toEqual(["history"]);
    expect((await usageError(["hok"])).message).toBe('unknown command "hok"');
  });
});

describe("closest", () => {
  test.each([
    ["dryrun", ["dry-run", "all"], "dry-run"],
    ["tagg", ["tag", "since"], "tag"],
    ["comit-hash", ["commit-hash", "title"], "commit-hash"],
    ["xyz", ["dry-run", "all"], undefined],
    ["li", ["list", "show"], "list"],
  ])("%s among %p → %p", (input, candidates, expected) => {
    expect(closest(input, candidates)).toBe(expected);
  });
});

describe("renderHelp", () => {
  test("full path in USAGE, --no-pager instead of --pager, internal options hidden, examples shown", async () => {
    const text = await renderHelp(await resolveCommandLine(root, ["sync"]), { version: "1.0.0", color: false });
    expect(text).toContain("USAGE  aiflare sync [OPTIONS] [COMMITS]");
    expect(text).toContain("--no-pager");
    expect(text).not.toMatch(/--pager\b/);
    expect(text).not.toContain("--from-hook");
    expect(text).toContain("-y, --yes");
    expect(text).toContain("EXAMPLES\n  aiflare sync --dry-run");
  });
});
