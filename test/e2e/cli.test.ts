/** The command line as a user types it: typos are errors that change nothing, help and failures are clear. */
import { afterEach, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { binary, runBin, tempRepo, type TempRepo } from "../helpers.ts";
import { makeEntry, startBackend, writeConfig, writeEntries, type Backend } from "../sync-fixtures.ts";

setDefaultTimeout(60_000);

const repos: TempRepo[] = [];
let backend: Backend | undefined;
beforeAll(() => {
  binary();
});
afterEach(() => {
  backend?.stop();
  backend = undefined;
  while (repos.length) repos.pop()!.cleanup();
});
function repo(): TempRepo {
  const r = tempRepo();
  repos.push(r);
  return r;
}
const aiflare = (r: TempRepo, args: string[], env: Record<string, string> = {}) => runBin(args, { cwd: r.root, env: { ...r.env, ...env } });

/** The names under COMMANDS in a help text. */
function commandsIn(help: string): string[] {
  const section = /\nCOMMANDS\n([\s\S]*?)\n\n/.exec(help)?.[1] ?? "";
  return section.split("\n").map((l) => l.trim().split(/\s+/)[0]!).filter(Boolean);
}

/** Every command path `aiflare --help` leads to (groups and their subcommands). */
async function allCommands(r: TempRepo, path: string[] = []): Promise<string[][]> {
  const help = await aiflare(r, [...path, "--help"]);
  expect(help.code).toBe(0);
  const out: string[][] = path.length ? [path] : [];
  for (const name of commandsIn(help.stdout)) out.push(...(await allCommands(r, [...path, name])));
  return out;
}

/** stderr is exactly one line. */
function oneLine(stderr: string): string {
  const lines = stderr.trimEnd().split("\n");
  expect(lines).toHaveLength(1);
  return lines[0]!;
}

describe("unknown flags", () => {
  test("every command refuses an unknown flag with exit 2, names it and points to its help", async () => {
    const r = repo();
    const commands = await allCommands(r);
    expect(commands.map((c) => c.join(" "))).toEqual(expect.arrayContaining(["install", "history list", "history show", "sync", "uninstall", "help", "version"]));
    for (const path of commands) {
      const res = await aiflare(r, [...path, "--definitely-not-a-flag"]);
      expect({ path, code: res.code }).toEqual({ path, code: 2 });
      const line = oneLine(res.stderr);
      expect(line).toContain("unknown option --definitely-not-a-flag");
      expect(line).toContain(`See "aiflare ${path.join(" ")} --help"`);
      expect(res.stdout).toBe("");
    }
  });

  test("uninstall --dryrun and uninstall --purge --dryrn --yes change nothing and suggest --dry-run", async () => {
    const r = repo();
    expect((await aiflare(r, ["install"])).code).toBe(0);
    const head = r.commit("a change");
    expect((await aiflare(r, ["capture", "--commit-hash", head, "--tag", "FEATURE", "--intent", "why"])).code).toBe(0);
    const settings = readFileSync(join(r.root, ".claude/settings.local.json"), "utf8");

    const dry = await aiflare(r, ["uninstall", "--dryrun"]);
    expect(dry.code).toBe(2);
    expect(oneLine(dry.stderr)).toBe('aiflare uninstall: unknown option --dryrun; did you mean --dry-run? See "aiflare uninstall --help".');
    const purge = await aiflare(r, ["uninstall", "--purge", "--dryrn", "--yes"]);
    expect(purge.code).toBe(2);
    expect(oneLine(purge.stderr)).toContain("did you mean --dry-run?");

    expect(readFileSync(join(r.root, ".claude/settings.local.json"), "utf8")).toBe(settings);
    expect(r.git("for-each-ref", "--format=%(refname)", "refs/heads/aiflare")).toContain("refs/heads/aiflare/timeline/v1");
  });

  test("sync --dryrun sends nothing", async () => {
    const r = repo();
    backend = startBackend();
    writeFileSync(join(r.root, ".git", "info", "exclude"), "aiflare.yml\n");
    writeEntries(r, [makeEntry(r.commit("a change"))]);
    writeConfig(r.root, backend.url, "ak_live_0123456789abcdefWXYZ");
    const res = await aiflare(r, ["sync", "--dryrun"]);
    expect(res.code).toBe(2);
    expect(oneLine(res.stderr)).toContain("unknown option --dryrun; did you mean --dry-run?");
    expect(backend.received).toHaveLength(0);
  });

  test("history list --tagg BUGFIX lists nothing and suggests --tag", async () => {
    const r = repo();
    writeEntries(r, [makeEntry(r.commit("a change"))]);
    for (const args of [["history", "list", "--tagg", "BUGFIX"], ["history", "--tagg", "BUGFIX"]]) {
      const res = await aiflare(r, args);
      expect(res.code).toBe(2);
      expect(res.stdout).toBe("");
      expect(oneLine(res.stderr)).toContain("unknown option --tagg; did you mean --tag?");
    }
  });

  test("a hook with an unknown flag still exits 0 and says so in the log file", async () => {
    const r = repo();
    const res = await runBin(["hook", "stop", "--bogus-flag"], { cwd: r.root, env: r.env, stdin: "{}" });
    expect(res.code).toBe(0);
    expect(res.stdout).toBe("");
    const log = readFileSync(join(r.root, ".context-capture", "aiflare.log"), "utf8");
    expect(log).toContain("unknown option --bogus-flag");
  });
});

describe("mistyped commands, help and version", () => {
  test.each([
    [["histroy"], 'aiflare: unknown command "histroy"; did you mean "history"? See "aiflare --help".'],
    [["history", "lst"], 'aiflare history: unknown command "lst"; did you mean "list"? See "aiflare history --help".'],
    [["help", "hisotry"], 'aiflare: unknown command "hisotry"; did you mean "history"? See "aiflare --help".'],
    [["doctor", "now"], 'aiflare doctor: takes no argument "now". See "aiflare doctor --help".'],
  ])("%p: one line with a suggestion, exit 2", async (args, expected) => {
    const res = await aiflare(repo(), args);
    expect(res.code).toBe(2);
    expect(res.stdout).toBe("");
    expect(oneLine(res.stderr)).toBe(expected);
  });

  test("aiflare help <command> is the command's --help; aiflare version and --version print the version", async () => {
    const r = repo();
    const viaHelp = await aiflare(r, ["help", "history", "list"]);
    const viaFlag = await aiflare(r, ["history", "list", "--help"]);
    expect(viaHelp.code).toBe(0);
    expect(viaHelp.stdout).toBe(viaFlag.stdout);
    expect(viaHelp.stdout).toContain("USAGE  aiflare history list [OPTIONS]");
    const version = (await aiflare(r, ["version"])).stdout;
    expect(version).toMatch(/^\d+\.\d+\.\d+\S*\n$/);
    expect((await aiflare(r, ["--version"])).stdout).toBe(version);
  });

  test("every help text: full command in USAGE, an example, no --pager flag, --cwd on repository commands", async () => {
    const r = repo();
    const noRepo = new Set(["help", "version"]);
    for (const path of await allCommands(r)) {
      const help = (await aiflare(r, [...path, "--help"])).stdout;
      const name = path.join(" ");
      expect({ name, usage: help.includes(`USAGE  aiflare ${name}`) }).toEqual({ name, usage: true });
      expect({ name, example: /\nEXAMPLES\n {2}aiflare /.test(help) || noRepo.has(name) }).toEqual({ name, example: true });
      expect({ name, pager: /--pager\b/.test(help) }).toEqual({ name, pager: false });
      if (!noRepo.has(name) && commandsIn(help).length === 0) expect({ name, cwd: help.includes("--cwd <dir>") }).toEqual({ name, cwd: true });
    }
    const capture = (await aiflare(r, ["capture", "--help"])).stdout;
    expect(capture.indexOf("--commit-hash")).toBeLessThan(capture.indexOf("--title"));
    const list = (await aiflare(r, ["history", "list", "--help"])).stdout;
    expect(list).toMatch(/--limit <n> .*default: 100/);
    expect(list).toMatch(/--tag <tag> .*default: all/);
    expect(list).toContain("--no-pager");
  });
});

describe("failures are one line", () => {
  test("an unexpected error: one line pointing to the log; the stack only with AIFLARE_DEBUG=1", async () => {
    const r = repo();
    writeEntries(r, [makeEntry(r.commit("a change"))]);
    // where the index directory belongs, a file: not a condition aiflare knows how to explain
    writeFileSync(join(r.git("rev-parse", "--absolute-git-dir"), "aiflare"), "");
    const res = await aiflare(r, ["history", "list"]);
    expect(res.code).toBe(1);
    const line = oneLine(res.stderr);
    expect(line).toStartWith("aiflare: unexpected error: ");
    expect(line).toContain(join(r.root, ".context-capture", "aiflare.log"));
    expect(line).not.toContain("    at ");
    expect(readFileSync(join(r.root, ".context-capture", "aiflare.log"), "utf8")).toContain("    at ");

    const debug = await aiflare(r, ["history", "list"], { AIFLARE_DEBUG: "1" });
    expect(debug.code).toBe(1);
    expect(debug.stderr).toContain("    at ");
  });

  test("why with a path that does not exist or a malformed range is an error, not 'No commit touched'", async () => {
    const r = repo();
    r.commit("add app", { "app.js": "a\nb\nc\n", "main.js": "x\ny\n" });
    const cases: [string, string][] = [
      ["nope.js", "nope.js: no such file"],
      ["app.js:abc", 'Bad line range "abc" in "app.js:abc"'],
      ["main.js:1-2,5", 'Bad line range "1-2,5" in "main.js:1-2,5"'],
    ];
    for (const [target, message] of cases) {
      const res = await aiflare(r, ["why", target]);
      expect({ target, code: res.code }).toEqual({ target, code: 1 });
      expect(oneLine(res.stderr)).toContain(message);
      expect(res.stdout).toBe("");
    }
    expect((await aiflare(r, ["why", "app.js:2"])).stdout).toContain("add app");
  });

  test("history show <old hash> of an entry moved by an amend points to the new hash", async () => {
    const r = repo();
    expect((await aiflare(r, ["install"])).code).toBe(0);
    const old = r.commit("first try");
    expect((await aiflare(r, ["capture", "--commit-hash", old, "--intent", "why"])).code).toBe(0);
    r.git("commit", "-q", "--amend", "-m", "second try");
    const now = r.git("rev-parse", "HEAD");
    expect(now).not.toBe(old);
    for (const asked of [old, old.slice(0, 8)]) {
      const res = await aiflare(r, ["history", "show", asked]);
      expect(res.code).toBe(1);
      expect(oneLine(res.stderr)).toContain(`its entry moved to ${now.slice(0, 10)}: aiflare history show ${now.slice(0, 10)}`);
    }
    expect((await aiflare(r, ["history", "show", now.slice(0, 10)])).code).toBe(0);
  });

  test.skipIf(!Bun.which("script"))("redact with no argument on a terminal says it is reading stdin", async () => {
    const r = repo();
    const proc = Bun.spawn(["script", "-qec", `${binary()} redact; echo "rc=$?"`, "/dev/null"], {
      cwd: r.root,
      env: r.env,
      stdin: new Blob(["plain words\n\x04"]),
      stdout: "pipe",
    });
    const out = await Promise.race([new Response(proc.stdout).text(), Bun.sleep(15_000).then(() => "hung")]);
    proc.kill();
    expect(out).toContain("aiflare redact: reading stdin; end with Ctrl-D");
    expect(out).toContain("rc=0");
  });

  test.skipIf(!Bun.which("script"))("on a 60-column terminal why and history show wrap long text at word boundaries", async () => {
    const r = repo();
    const head = r.commit("add app", { "app.js": "a\n" });
    const intent = "Problem: the pager swallowed the last line of every page when the terminal was narrower than the longest title. Solution: measure display width.";
    expect((await aiflare(r, ["capture", "--commit-hash", head, "--intent", intent])).code).toBe(0);
    for (const cmd of ["why app.js", `history show ${head.slice(0, 10)}`]) {
      const proc = Bun.spawn(["script", "-qec", `stty cols 60; ${binary()} ${cmd} --no-pager`, "/dev/null"], {
        cwd: r.root,
        env: r.env,
        stdin: "ignore",
        stdout: "pipe",
      });
      const out = (await new Response(proc.stdout).text()).replaceAll("\r", "");
      const lines = out.split("\n");
      for (const l of lines) expect({ cmd, l, fits: Bun.stringWidth(l) <= 60 }).toEqual({ cmd, l, fits: true });
      const intentLines = lines.filter((l) => /^ {4}\S/.test(l) && intent.includes(l.trim()));
      expect(intentLines.map((l) => l.trim()).join(" ")).toBe(intent);
    }
  });

  test("redact <directory> says it is a directory", async () => {
    const r = repo();
    const res = await aiflare(r, ["redact", ".git"]);
    expect(res.code).toBe(1);
    expect(oneLine(res.stderr)).toContain(".git is a directory");
    expect(existsSync(join(r.root, ".git"))).toBe(true);
  });
});
