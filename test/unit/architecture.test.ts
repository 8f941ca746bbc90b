/**
 * The layer order (commands → core → store/redact → util) and the hooks' light import graphs, read from the
 * source: a static import that breaks either fails here instead of slowing every prompt.
 */
import { describe, expect, test } from "bun:test";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, relative, resolve } from "node:path";
import { MAIN_BUNDLE } from "../../scripts/bundle.ts";

const SRC = resolve(import.meta.dir, "..", "..", "src");
const transpiler = new Bun.Transpiler({ loader: "ts" });

function sourceFiles(dir = SRC): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((d) => {
    const path = join(dir, d.name);
    if (d.isDirectory()) return sourceFiles(path);
    return d.name.endsWith(".ts") && !d.name.endsWith(".d.ts") ? [path] : [];
  });
}

/** The imports of a source file as Bun sees them (type-only ones are already gone). */
function scan(file: string) {
  return transpiler.scanImports(readFileSync(file, "utf8").replace(/^#!.*\n/, ""));
}

/** Value imports loaded when the module loads (type-only imports are erased, `import()` and require() are lazy). */
function staticImports(file: string): string[] {
  return scan(file)
    .filter((i) => i.kind === "import-statement")
    .map((i) => (i.path.startsWith(".") ? resolve(dirname(file), i.path) : i.path));
}

/** Every module (src-relative path or package name) loaded with `entries`, following static imports only. */
function staticClosure(...entries: string[]): Set<string> {
  const seen = new Set<string>();
  const walk = (file: string) => {
    const key = file.startsWith(SRC) ? relative(SRC, file) : file;
    if (seen.has(key)) return;
    seen.add(key);
    if (file.startsWith(SRC) && file.endsWith(".ts")) for (const dep of staticImports(file)) walk(dep);
  };
  for (const e of entries) walk(join(SRC, e));
  return seen;
}

/** Every import (static, dynamic or required) of each file under `layer`, as src-relative paths or package names. */
function importsUnder(layer: string): [string, string][] {
  return sourceFiles(join(SRC, layer)).flatMap((file) =>
    scan(file).map((i): [string, string] => {
      const target = i.path.startsWith(".") ? relative(SRC, resolve(dirname(file), i.path)) : i.path;
      return [relative(SRC, file), target];
    }),
  );
}

describe("layers", () => {
  const below: [string, RegExp][] = [
    ["store", /^(core|commands|agents)\//],
    ["redact", /^(core|commands|agents|store)\//],
    ["util", /^(core|commands|agents|store|redact)\//],
    ["core", /^commands\//],
    ["server", /^commands\//],
  ];
  for (const [layer, forbidden] of below) {
    test(`${layer}/ imports nothing from the layers above it`, () => {
      const wrong = importsUnder(layer).filter(([, target]) => forbidden.test(target));
      expect(wrong).toEqual([]);
    });
  }

  test("server/ is a room of its own: nothing below the commands imports it, and `serve` loads it lazily", () => {
    const wrong = ["core", "store", "redact", "util", "agents"].flatMap(importsUnder).filter(([, target]) => /^server\//.test(target));
    expect(wrong).toEqual([]);
    expect([...staticClosure("cli.ts", "commands/serve.ts")].filter((m) => /^server\//.test(m))).toEqual([]);
  });

  for (const layer of ["core", "store", "redact", "util", "agents", "server"]) {
    test(`${layer}/ does not know it runs in a CLI (no citty, no consola)`, () => {
      const wrong = importsUnder(layer).filter(([, target]) => /^(citty|consola)(\/|$)/.test(target));
      expect(wrong).toEqual([]);
    });
  }
});

describe("hot paths", () => {
  // store/refs.ts reads a ref or HEAD with node:fs alone: session-start's saved answer is keyed by them
  const heavy = (mods: Set<string>) =>
    [...mods].filter((m) => /^(bun:sqlite|isomorphic-git|yaml)$|^(store\/(?!refs\.ts$)|redact\/)|^util\/git\.ts$|^core\/config\.ts$/.test(m));

  test("user-prompt-submit and stop load no store, SQLite, redactor or yaml", () => {
    const mods = staticClosure("cli.ts", "commands/hook.ts", "core/hook/runner.ts", "core/hook/stdin.ts");
    expect(mods.has("core/hook/events.ts")).toBe(true);
    expect(heavy(mods)).toEqual([]);
  });

  test("the executable's entry runs agent hooks with node:fs alone: no CLI, schema, yaml or terminal library", () => {
    const mods = staticClosure("main.ts");
    expect(mods.has("core/hook/runner.ts")).toBe(true);
    expect(mods.has("cli.ts")).toBe(false);
    const libs = [...mods].filter((m) => !m.endsWith(".ts") && !/^node:(fs|path)$/.test(m));
    expect(libs).toEqual([]);
    expect(heavy(mods)).toEqual([]);
  });

  test("the executable's entry chunk holds the hooks' code: a hook loads it and at most one chunk more", async () => {
    const out = mkdtempSync(join(tmpdir(), "aiflare-chunks-"));
    try {
      const r = await Bun.build({ ...MAIN_BUNDLE, entrypoints: [join(SRC, "main.ts")], outdir: out, metafile: true, minify: false });
      expect(r.success).toBe(true);
      const outputs = r.metafile!.outputs;
      const entry = Object.keys(outputs).find((k) => outputs[k]!.entryPoint)!;
      // the chunks loaded with the entry (static imports), each with the source modules it holds
      const loaded = new Map<string, string[]>();
      const walk = (chunk: string) => {
        if (loaded.has(chunk)) return;
        loaded.set(chunk, Object.keys(outputs[chunk]!.inputs).map((m) => relative(SRC, resolve(m))));
        for (const i of outputs[chunk]!.imports) if (i.kind === "import-statement" && i.path in outputs) walk(i.path);
      };
      walk(entry);
      expect(loaded.get(entry)).toEqual(
        expect.arrayContaining([
          "main.ts",
          "core/hook/runner.ts",
          "core/hook/events.ts",
          "core/hook/stdin.ts",
          "core/fsutil.ts",
          "core/session-log.ts",
          "core/recall/start-cache.ts",
          // session-end queues its job and starts the capture worker without loading a chunk more
          "core/capture/queue.ts",
          "util/self.ts",
        ]),
      );
      expect([...loaded.values()].length).toBeLessThanOrEqual(2);
    } finally {
      rmSync(out, { recursive: true, force: true });
    }
  });

  test("post-tool-use of a command without a new commit loads only the commit detector and what every hook has loaded", () => {
    const mods = staticClosure("core/capture/commit-hook.ts");
    // the repository finder and the session log are in the entry's chunk already (the runner uses them)
    expect([...mods].sort()).toEqual([
      "core/capture/commit-hook.ts",
      "core/capture/detect.ts",
      "core/capture/may-commit.ts",
      "core/fsutil.ts",
      "core/repo.ts",
      "core/session-log.ts",
      "core/session.ts",
      "errors.ts",
      "node:fs",
      "node:path",
      "util/ids.ts",
      "util/lockfile.ts",
    ]);
  });

  test("session-end only queues: no store, redactor or settings parser; the worker's transcript store needs no entry writer", () => {
    const queue = staticClosure("core/capture/queue.ts");
    expect([...queue].filter((m) => /^store\/|^redact\/|^core\/config(-files)?\.ts$|^(yaml|valibot)$/.test(m))).toEqual([]);
    const mods = staticClosure("core/capture/session-store.ts");
    expect(mods.has("store/sessions.ts")).toBe(true);
    expect([...mods].filter((m) => /^store\/(timeline|entry)\.ts$|^core\/capture\/(record|facts|verify|capture-commits)\.ts$|^core\/config\.ts$|^(yaml|valibot)$/.test(m))).toEqual([]);
  });

  test("the commit hook queues its entries: no entry writer, timeline reader, transcript store, redactor or settings parser", () => {
    const mods = staticClosure("core/capture/capture-commits.ts");
    expect([...mods].filter((m) => /^core\/config(-files)?\.ts$|^(yaml|valibot)$|^redact\/|^store\/(sessions|timeline|entry)\.ts$|^core\/capture\/(record|session-store|drain)\.ts$/.test(m))).toEqual([]);
  });

  test("pre-tool-use (recall) loads the index queries, the object reader and node:fs only: no isomorphic-git, redactor, yaml or settings parser", () => {
    const mods = staticClosure("core/recall/edit.ts");
    expect([...mods].filter((m) => !/^node:|^core\/recall\/|^store\/(refs|objects|index\/(recall|db))\.ts$|^util\/git\.ts$|^node:zlib$|^core\/(session|fsutil|config-files)\.ts$|^errors\.ts$|^util\/(ids|lockfile)\.ts$|^bun:sqlite$/.test(m))).toEqual([]);
  });

  test("session-start loads no SQLite, index reader or node:os before it knows there is a timeline", () => {
    const mods = staticClosure("core/recall/session-start.ts");
    expect([...mods].filter((m) => /^(bun:sqlite|node:os|yaml)$|^store\/(index|objects)|^util\/git\.ts$|^core\/config\.ts$/.test(m))).toEqual([]);
  });

  test("session-start's saved answer is read with node:fs alone, from the entry's chunk: no recall code, SQLite or settings parser", () => {
    const mods = staticClosure("core/hook/events.ts");
    expect(mods.has("core/recall/start-cache.ts")).toBe(true);
    expect([...mods].filter((m) => /^core\/recall\/(session-start|format|index-access)\.ts$|^(bun:sqlite|node:os|yaml)$|^core\/config\.ts$/.test(m))).toEqual([]);
  });

  test("history list loads the index, its queries and the list's rendering: no yaml, settings, sync client, links or team", () => {
    // what the command imports, its run's lazy import included
    const file = join(SRC, "commands/history/list.ts");
    const direct = scan(file)
      .map((i) => i.path)
      .filter((p) => p.startsWith("."))
      .map((p) => relative(SRC, resolve(dirname(file), p)));
    const mods = staticClosure("commands/history/list.ts", ...direct);
    expect(mods.has("store/index-db.ts")).toBe(true);
    expect(mods.has("core/history/render.ts")).toBe(true);
    expect(
      [...mods].filter((m) => /^(yaml|node:crypto|re2js)$|^core\/(config\.ts|team\/|links\/|sync\/)|^core\/history\/(known|linked|why|blame)\.ts$|^redact\//.test(m)),
    ).toEqual([]);
  });

  test("pre-push loads no SQLite, redactor or yaml before it knows a backend is configured", () => {
    const mods = staticClosure("core/sync/pre-push.ts");
    expect([...mods].filter((m) => /^(bun:sqlite|yaml)$|^redact\/|^store\/index/.test(m))).toEqual([]);
  });

  test("aiflare ui listens and prints its URL before it loads the read API, the index or the settings parser", () => {
    const mods = staticClosure("cli.ts", "commands/ui.ts", "core/dashboard/index.ts", "web/assets.ts");
    expect(mods.has("core/dashboard/server.ts")).toBe(true);
    expect([...mods].filter((m) => /^(bun:sqlite|yaml|node:zlib)$|^store\/|^core\/(dashboard\/api|history\/|team\/|config\.ts)|^util\/git\.ts$/.test(m))).toEqual([]);
  });
});

describe("tests are self-contained", () => {
  const TEST = resolve(import.meta.dir, "..");
  // The folder of originals beside a developer's checkout, which a user's clone does not have; named once and
  // built into a pattern, so that this file does not refer to it as a path itself.
  const SIBLING = "shared";
  const SIBLING_RE = new RegExp(`\\.\\./${SIBLING}\\b|\\b${SIBLING}/fixtures\\b|/work/${SIBLING}\\b`);
  const REPO = resolve(TEST, "..");
  const inside = (p: string) => p === REPO || p.startsWith(`${REPO}/`);
  const testFiles = (dir = TEST): string[] =>
    readdirSync(dir, { withFileTypes: true }).flatMap((d) => {
      const path = join(dir, d.name);
      // fixtures, and the agents' npm packages installed for the real-agent tests (git-ignored), are not test code
      if (d.isDirectory()) return d.name === "fixtures" || d.name === ".install" ? [] : testFiles(path);
      return d.name.endsWith(".ts") ? [path] : [];
    });

  /** Paths that `text` (the source of `file`) names and that lead out of the repository (a sibling fixtures folder). */
  function leavesRepo(file: string, text: string): string[] {
    const bases: Record<string, string> = { "import.meta.dir": dirname(file), ROOT: REPO, FIXTURES: join(REPO, "test", "fixtures") };
    const found: string[] = [];
    if (SIBLING_RE.test(text)) found.push(SIBLING);
    // relative string literals ("../x", './x', imports too), from the file's directory
    for (const m of text.matchAll(/["'`](\.{1,2}\/[^"'`$]*)["'`]/g)) {
      if (!inside(resolve(dirname(file), m[1]!))) found.push(m[1]!);
    }
    // resolve(base, "..", "x") and join(base, …) from a base whose place is known
    for (const m of text.matchAll(/\b(?:resolve|join)\(\s*(import\.meta\.dir|ROOT|FIXTURES)((?:\s*,\s*"[^"]*")+)\s*\)/g)) {
      const parts = [...m[2]!.matchAll(/"([^"]*)"/g)].map((p) => p[1]!);
      if (!inside(resolve(bases[m[1]!]!, ...parts))) found.push(`${m[1]} + ${parts.join("/")}`);
    }
    return found;
  }

  test("no test file refers to a path outside the repository", () => {
    const wrong = testFiles().flatMap((f) => leavesRepo(f, readFileSync(f, "utf8")).map((p) => `${relative(REPO, f)}: ${p}`));
    expect(wrong).toEqual([]);
  });

  test("the check sees the ways out of the repository", () => {
    const file = join(TEST, "e2e", "probe.test.ts");
    const up = ".".repeat(2); // spelled so that this file does not trip the check above
    const samples: [string, boolean][] = [
      [`readFileSync(resolve(ROOT, "${up}", "${SIBLING}", "fixtures", "a.json"))`, true],
      [`const F = "${up}/${SIBLING}/fixtures/a.json";`, true],
      [`const F = "${up}/${up}/${up}/outside/x.json";`, true],
      [`resolve(import.meta.dir, "${up}", "${up}", "${up}", "elsewhere")`, true],
      [`join(FIXTURES, "${up}", "${up}", "${up}", "x")`, true],
      [`resolve(import.meta.dir, "${up}", "fixtures", "x")`, false],
      [`import { x } from "${up}/helpers.ts";`, false],
    ];
    for (const [text, leaves] of samples) expect({ text, leaves: leavesRepo(file, text).length > 0 }).toEqual({ text, leaves });
  });
});
