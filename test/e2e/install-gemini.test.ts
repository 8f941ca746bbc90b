/**
 * `install --agent gemini`: hooks merged into `.gemini/settings.json` (timeouts in ms, named for Gemini's trust
 * list) with a command that outlives upgrades and moves, doctor reading them as Gemini does, uninstall restoring the
 * user's file exactly.
 */
import { afterEach, describe, expect, test } from "bun:test";
import { existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { join, relative } from "node:path";
import { binary, ROOT, runBin, tempRepo, type TempRepo } from "../helpers.ts";

const repos: TempRepo[] = [];
afterEach(() => {
  for (const r of repos.splice(0)) r.cleanup();
});
function repo(): TempRepo {
  const r = tempRepo();
  repos.push(r);
  return r;
}

function snapshot(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (d: string) => {
    for (const name of readdirSync(d).sort()) {
      const p = join(d, name);
      if (name === ".git" || name === ".context-capture") continue; // live sessions stay until --purge
      if (lstatSync(p).isDirectory()) walk(p);
      else out[relative(dir, p)] = readFileSync(p, "utf8");
    }
  };
  walk(dir);
  return out;
}

type Settings = { hooks: Record<string, { matcher?: string; hooks: { name?: string; command: string; timeout?: number }[] }[]> } & Record<string, unknown>;
const settingsOf = (r: TempRepo) => JSON.parse(readFileSync(join(r.root, ".gemini/settings.json"), "utf8")) as Settings;
const ours = (doc: Settings, event: string) => (doc.hooks[event] ?? []).flatMap((g) => g.hooks).filter((h) => h.command.includes(" hook "));

/** A PATH whose first directory holds `aiflare`, a link to the built binary (as a package manager installs it). */
function pathWithAiflare(r: TempRepo): string {
  const bin = join(r.home, "bin");
  mkdirSync(bin, { recursive: true });
  symlinkSync(binary(), join(bin, "aiflare"));
  return `${bin}:${r.env.PATH}`;
}

/** Runs a settings command the way Gemini CLI does: through a shell, payload on stdin. */
function runAsGemini(r: TempRepo, command: string, payload: unknown, env: Record<string, string>) {
  const p = Bun.spawnSync(["sh", "-c", command], { cwd: r.root, env: { ...r.env, ...env }, stdin: new Blob([JSON.stringify(payload)]), stdout: "pipe", stderr: "pipe" });
  return { code: p.exitCode, stdout: p.stdout.toString(), stderr: p.stderr.toString() };
}

/** A PATH with git and a shell, and no aiflare. */
const BARE_PATH = "/usr/bin:/bin";

const doctorJson = async (r: TempRepo, env: Record<string, string>) => {
  const out = await runBin(["doctor", "--json"], { cwd: r.root, env: { ...r.env, ...env } });
  return JSON.parse(out.stdout).results as { id: string; status: string; message: string }[];
};

describe("install --agent gemini", () => {
  test("merged into the user's settings, called as `aiflare` through PATH; doctor and uninstall read it back", async () => {
    const r = repo();
    const PATH = pathWithAiflare(r);
    mkdirSync(join(r.root, ".gemini"));
    const mine = {
      model: { name: "gemini-2.5-pro" },
      hooks: { BeforeTool: [{ matcher: "write_file", hooks: [{ name: "lint", type: "command", command: "./lint.sh", timeout: 5000 }] }] },
    };
    const original = `${JSON.stringify(mine, null, 2)}\n`;
    writeFileSync(join(r.root, ".gemini/settings.json"), original);
    const before = snapshot(r.root);

    const out = await runBin(["install", "--agent", "gemini"], { cwd: r.root, env: { ...r.env, PATH } });
    expect(out.code).toBe(0);
    expect(out.stdout).toContain("GEMINI.md");
    expect(existsSync(join(r.root, ".claude/settings.local.json"))).toBe(false);
    const doc = settingsOf(r);
    expect(doc.model).toEqual(mine.model);
    expect(doc.hooks.BeforeTool).toEqual(mine.hooks.BeforeTool);
    expect(ours(doc, "BeforeAgent")).toEqual([
      { name: "aiflare-user-prompt-submit", type: "command", command: "aiflare hook user-prompt-submit --agent gemini", timeout: 10000 },
    ] as never);
    expect(doc.hooks.AfterTool!.find((g) => g.matcher === "run_shell_command")!.hooks[0]!.command).toBe("aiflare hook post-tool-use --agent gemini");
    for (const e of ["SessionStart", "AfterAgent", "SessionEnd"]) expect(ours(doc, e)).toHaveLength(1);
    // nothing Gemini cannot give context on, nothing that fires before every model call
    expect(doc.hooks.BeforeTool!.flatMap((g) => g.hooks).some((h) => h.command.includes("aiflare"))).toBe(false);
    expect(doc.hooks.PreCompress).toBeUndefined();
    expect(readFileSync(join(r.root, "GEMINI.md"), "utf8")).toContain("context-capture");

    // the commands run as Gemini runs them record the session under the .gemini- prefix
    const fixture = JSON.parse(readFileSync(join(ROOT, "test/fixtures/agents/gemini/BeforeAgent.json"), "utf8"));
    const ran = runAsGemini(r, ours(doc, "BeforeAgent")[0]!.command, { ...fixture, cwd: r.root }, { PATH });
    expect(ran).toMatchObject({ code: 0, stdout: "" });
    expect(readFileSync(join(r.root, `.context-capture/.gemini-prompts-${fixture.session_id}`), "utf8")).toContain(fixture.prompt);

    // doctor: the hooks as written, the `aiflare` a shell finds on PATH, and Gemini's trust list
    let results = await doctorJson(r, { PATH });
    expect(results.find((c) => c.id === "hooks:.gemini/settings.json")?.status).toBe("ok");
    const called = (rs: typeof results) => rs.find((c) => c.id.startsWith("binary:") && c.message.startsWith("Gemini CLI hooks call"));
    expect(called(results)).toMatchObject({ status: "ok" });
    expect(called(results)!.message).toContain(join(r.home, "bin", "aiflare"));
    expect(results.find((c) => c.id === "gemini-trust")).toMatchObject({ status: "warn" });
    const keys = Object.values(doc.hooks).flat().flatMap((g) => g.hooks).filter((h) => h.command.startsWith("aiflare ")).map((h) => `${h.name}:${h.command}`);
    mkdirSync(join(r.home, ".gemini"), { recursive: true });
    writeFileSync(join(r.home, ".gemini/trusted_hooks.json"), JSON.stringify({ [r.root]: ["lint:./lint.sh", ...keys] }));
    results = await doctorJson(r, { PATH });
    expect(results.find((c) => c.id === "gemini-trust")?.status).toBe("ok");
    // without aiflare on PATH, Gemini's shell would find nothing
    results = await doctorJson(r, { PATH: BARE_PATH });
    expect(called(results)).toMatchObject({ id: "binary:aiflare", status: "fail" });

    // installing again changes nothing; uninstall gives the user's file back byte for byte
    const again = await runBin(["install", "--agent", "gemini"], { cwd: r.root, env: { ...r.env, PATH } });
    expect(again.code).toBe(0);
    expect(settingsOf(r)).toEqual(doc);
    expect((await runBin(["uninstall"], { cwd: r.root, env: { ...r.env, PATH } })).code).toBe(0);
    const after = snapshot(r.root);
    expect(after[".gemini/settings.json"]).toBe(original);
    expect(after).toEqual(before);
  });

  test("without aiflare on PATH the hooks call this binary's path, and install says how to keep them trusted", async () => {
    const r = repo();
    const env = { ...r.env, PATH: BARE_PATH };
    const out = await runBin(["install", "--agent", "gemini"], { cwd: r.root, env });
    expect(out.code).toBe(0);
    expect(out.stdout).toContain("aiflare is not on PATH");
    const doc = settingsOf(r);
    expect(ours(doc, "SessionStart")[0]!.command).toBe(`${binary()} hook session-start --agent gemini`);
    const results = await doctorJson(r, { PATH: BARE_PATH });
    expect(results.find((c) => c.id === "hooks:.gemini/settings.json")?.status).toBe("ok");
    expect((await runBin(["uninstall"], { cwd: r.root, env })).code).toBe(0);
    expect(existsSync(join(r.root, ".gemini/settings.json"))).toBe(false);
  });
});
