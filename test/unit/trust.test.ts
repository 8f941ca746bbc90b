/** The pieces of the trust boundary, table-driven: terminal text, pattern shapes, endpoints, settings sources, paths. */
import { afterEach, describe, expect, test } from "bun:test";
import { chmodSync, mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadConfig, userConfigPath } from "../../src/core/config.ts";
import { appendWhole, ensureContextDir, readOwnFile, resolveTarget } from "../../src/core/fsutil.ts";
import { insecureEndpoint, isHeaderSafe, readCapped } from "../../src/core/sync/client.ts";
import { catastrophicShape } from "../../src/redact/options.ts";
import { redactText } from "../../src/redact/index.ts";
import { holdsControls, termSafe, termSafeDeep } from "../../src/util/terminal.ts";

describe("termSafe", () => {
  const cases: [string, string, string][] = [
    ["plain text", "hello world", "hello world"],
    ["newlines and tabs kept", "a\n\tb", "a\n\tb"],
    ["window title (OSC 0, BEL)", "x\x1b]0;pwned\x07y", "xy"],
    ["clipboard write (OSC 52, ST)", "x\x1b]52;c;aGk=\x1b\\y", "xy"],
    ["clear screen (CSI)", "x\x1b[2Jy", "xy"],
    ["colour (CSI m)", "\x1b[31mred\x1b[0m", "red"],
    ["8-bit CSI", "x\x9b2Jy", "xy"],
    ["DCS string", "x\x1bP1$r\x1b\\y", "xy"],
    ["charset escape", "x\x1b(By", "xy"],
    ["carriage return and backspace", "ok\rfake\b!", "okfake!"],
    ["NUL, BEL, DEL and C1", "a\x00b\x07c\x7fd\x85e", "abcde"],
    ["lone ESC at the end", "end\x1b", "end"],
    ["unterminated OSC loses only its introducer", "a\x1b]0;title", "a0;title"],
    ["unicode kept", "naïve 日本 😀", "naïve 日本 😀"],
  ];
  for (const [name, input, want] of cases) test(name, () => expect(termSafe(input)).toBe(want));

  test("termSafeDeep cleans strings in arrays, objects and maps, and leaves the input alone", () => {
    const input = { a: ["\x1b[2Jx"], m: new Map([["k", { t: "\x07y" }]]), n: 3 };
    expect(termSafeDeep(input)).toEqual({ a: ["x"], m: new Map([["k", { t: "y" }]]), n: 3 });
    expect(input.a[0]).toBe("\x1b[2Jx");
  });

  test("holdsControls is true exactly when termSafe would change a string somewhere in the data", () => {
    for (let c = 0; c < 0x2100; c++) {
      const s = `a${String.fromCharCode(c)}b`;
      const data = [{ x: "plain", p: ["ok", s], n: 1, b: true, z: null }];
      // a backslash before "b" spells JSON's escape of a control: true for nothing, which only costs a copy
      expect({ c, holds: holdsControls(data) }).toEqual({ c, holds: termSafe(s) !== s || c === 0x5c });
    }
    expect(holdsControls([])).toBe(false);
    expect(holdsControls("tab\tand\nnewline")).toBe(false);
    // text that spells an escape may answer true for nothing (the caller then cleans what needed no cleaning)
    expect(holdsControls(["C:\\u0041\\bin"])).toBe(true);
  });
});

describe("catastrophic pattern shapes", () => {
  const refused = ["(a+)+$", "(a*)*", "(\\w+\\s?)+", "(.*a){20}", "(a|a)*", "(a|aa)+", "(\\d|[0-9])+", "([a-z]{1,40})+", "(x)\\1", "(?<n>x)\\k<n>"];
  const allowed = ["ACME-\\d{4}-\\d{4}", "sessioncookie=(\\S+)", "(?:foo|bar)+", "(?:-[a-z0-9]{1,8}){3}", "[(]+a+", "\\(a+\\)+", "tok_[A-Za-z0-9]{20,64}", "a*a*a*b"];
  for (const p of refused) test(`refuses ${p}`, () => expect(catastrophicShape(p)).not.toBeNull());
  for (const p of allowed) test(`allows ${p}`, () => expect(catastrophicShape(p)).toBeNull());

  test("a user pattern finds matches across its input windows, and long inputs stay linear", () => {
    const text = `${"x".repeat(5000)} TOK-1234 ${"y".repeat(9000)} TOK-5678 end`;
    const out = redactText(text, { patterns: [{ kind: "tok", pattern: "TOK-[0-9]{4}" }] });
    expect(out.text.match(/<REDACTED:tok>/g)).toHaveLength(2);
    const slow = redactText(`${"a".repeat(100_000)}!`, { patterns: [{ kind: "p", pattern: "a*a*a*b" }] });
    expect(slow.findings).toEqual([]);
  });

  test("a /regex/i pattern with a group keeps its flags and redacts the group", () => {
    const out = redactText("SessionCookie=abc.def", { patterns: [{ kind: "cookie", pattern: "/sessioncookie=(\\S+)/i" }] });
    expect(out.text).toBe("SessionCookie=<REDACTED:cookie>");
  });
});

describe("endpoints and keys", () => {
  const cases: [string, boolean, boolean][] = [
    ["https://aiflare.example.com", false, true],
    ["http://127.0.0.1:8080", false, true],
    ["http://localhost:3000", false, true],
    ["http://[::1]:3000", false, true],
    ["http://aiflare.example.com", false, false],
    ["http://10.0.0.5", false, false],
    ["http://0.0.0.0:80", false, false],
    ["http://aiflare.example.com", true, true],
    ["ftp://aiflare.example.com", true, false],
  ];
  for (const [url, optIn, usable] of cases) {
    test(`${url}${optIn ? " (opted in)" : ""} ${usable ? "is used" : "is refused"}`, () => {
      expect(insecureEndpoint(url, optIn) === null).toBe(usable);
    });
  }
  test("header-safe keys", () => {
    expect(isHeaderSafe("ak_live_0123")).toBe(true);
    for (const bad of ["a\nb", "a\rb", "a\x07b", "ключ", " lead", ""]) expect(isHeaderSafe(bad)).toBe(false);
  });
  test("a body is read only up to the cap", async () => {
    let pulled = 0;
    const res = new Response(new ReadableStream({ pull: (c) => { pulled++; c.enqueue(new Uint8Array(1000).fill(97)); } }));
    const text = await readCapped(res, 2500);
    expect(text.length).toBe(2500);
    expect(pulled).toBeLessThan(10);
  });
});

describe("where settings may come from", () => {
  let dir = "";
  afterEach(() => dir && rmSync(dir, { recursive: true, force: true }));

  function setup() {
    dir = realpathSync(mkdtempSync(join(tmpdir(), "aiflare-trust-")));
    const root = join(dir, "repo");
    const home = join(dir, "home");
    mkdirSync(root);
    mkdirSync(home);
    const env = { HOME: home, PATH: process.env.PATH, GIT_CONFIG_NOSYSTEM: "1" };
    Bun.spawnSync(["git", "init", "-q", root], { env });
    const git = (...args: string[]) => Bun.spawnSync(["git", ...args], { cwd: root, env });
    return { root, home, env, git };
  }

  test("a tracked aiflare.yml gives only redact.patterns; the rest is listed as ignored", () => {
    const { root, env, git } = setup();
    writeFileSync(join(root, "aiflare.yml"), 'endpoint: https://evil.example\napi_key: k-1234\nrecall: false\nredact:\n  allow: ["/.+/"]\n  patterns:\n    - kind: t\n      pattern: "T-[0-9]+"\n');
    git("add", "aiflare.yml");
    const c = loadConfig(root, env);
    expect([c.endpoint, c.apiKey, c.recall, c.redact.allow]).toEqual([undefined, undefined, undefined, []]);
    expect(c.redact.patterns).toEqual([{ kind: "t", pattern: "T-[0-9]+" }]);
    expect(c.ignored.map((i) => i.setting).sort()).toEqual(["api_key", "endpoint", "recall", "redact.allow"]);
  });

  test("the same file untracked and the user's own is used", () => {
    const { root, env } = setup();
    writeFileSync(join(root, "aiflare.yml"), "endpoint: https://mine.example\napi_key: k-1234\n", { mode: 0o600 });
    const c = loadConfig(root, env);
    expect([c.endpoint, c.apiKey, c.ignored]).toEqual(["https://mine.example", "k-1234", []]);
    chmodSync(join(root, "aiflare.yml"), 0o620);
    expect(loadConfig(root, env).ignored[0]?.reason).toContain("other users can write it");
  });

  test("environment, then the user's section for this repository, then aiflare.yml, then the user's top level", () => {
    const { root, home, env } = setup();
    const file = userConfigPath(env);
    expect(file).toBe(join(home, ".config", "aiflare", "config.yml"));
    mkdirSync(join(home, ".config", "aiflare"), { recursive: true });
    writeFileSync(file, `endpoint: https://top.example\napi_key: top-key\nrepos:\n  ${root}:\n    api_key: repo-key\n`, { mode: 0o600 });
    writeFileSync(join(root, "aiflare.yml"), "endpoint: https://file.example\napi_key: file-key\n", { mode: 0o600 });
    let c = loadConfig(root, env);
    expect([c.endpoint, c.apiKey]).toEqual(["https://file.example", "repo-key"]);
    c = loadConfig(root, { ...env, AIFLARE_API_KEY: "env-key" });
    expect(c.apiKey).toBe("env-key");
    expect(c.origins).toContainEqual({ setting: "api_key", from: "AIFLARE_API_KEY" });
    rmSync(join(root, "aiflare.yml"));
    expect(loadConfig(root, env).endpoint).toBe("https://top.example");
    const xdg = join(dir, "xdg");
    expect(userConfigPath({ ...env, XDG_CONFIG_HOME: xdg })).toBe(join(xdg, "aiflare", "config.yml"));
  });

  test("a user config others can write is ignored whole", () => {
    const { root, env } = setup();
    const file = userConfigPath(env);
    mkdirSync(join(file, ".."), { recursive: true });
    writeFileSync(file, "endpoint: https://top.example\napi_key: top-key\n");
    chmodSync(file, 0o666);
    const c = loadConfig(root, env);
    expect(c.endpoint).toBeUndefined();
    expect(c.ignored[0]).toMatchObject({ setting: "everything", from: file });
  });

  test("a malformed tracked aiflare.yml is ignored; a malformed file of the user's is an error naming it", () => {
    const { root, env, git } = setup();
    writeFileSync(join(root, "aiflare.yml"), "endpoint: [unclosed");
    git("add", "aiflare.yml");
    expect(loadConfig(root, env).ignored[0]?.setting).toBe("everything");
    git("rm", "-q", "--cached", "aiflare.yml");
    expect(() => loadConfig(root, env)).toThrow(/aiflare\.yml is not valid YAML/);
  });
});

describe("own files and install targets", () => {
  let dir = "";
  afterEach(() => dir && rmSync(dir, { recursive: true, force: true }));

  test("own files refuse links; install targets follow links only inside the scope", () => {
    dir = realpathSync(mkdtempSync(join(tmpdir(), "aiflare-paths-")));
    const root = join(dir, "repo");
    mkdirSync(join(root, "docs"), { recursive: true });
    writeFileSync(join(dir, "outside.txt"), "outside\n");
    const ctx = ensureContextDir(root);
    symlinkSync(join(dir, "outside.txt"), join(ctx, "linked"));
    expect(() => appendWhole(join(ctx, "linked"), "x")).toThrow(/symbolic link/);
    expect(() => readOwnFile(join(ctx, "linked"))).toThrow(/symbolic link/);
    const scope = { inside: [root], notInside: [join(root, ".git")], label: "the repository" };
    symlinkSync("docs/A.md", join(root, "A.md"));
    expect(resolveTarget(join(root, "A.md"), scope)).toBe(join(root, "docs", "A.md"));
    symlinkSync("../outside.txt", join(root, "B.md"));
    expect(() => resolveTarget(join(root, "B.md"), scope)).toThrow(/outside the repository/);
    symlinkSync(".git/config", join(root, "C.md"));
    mkdirSync(join(root, ".git"));
    expect(() => resolveTarget(join(root, "C.md"), scope)).toThrow(/outside the repository/);
    symlinkSync("../nowhere/new.md", join(root, "D.md"));
    expect(() => resolveTarget(join(root, "D.md"), scope)).toThrow(/leads to .*nowhere\/new\.md/);
  });
});
