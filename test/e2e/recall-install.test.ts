/**
 * Recall's part of install, uninstall and doctor through the compiled binary: the PreToolUse hook (Claude Code
 * and Codex), the why skill, `install --mcp` merging `.mcp.json`, and the recall state shown by install and doctor.
 */
import { afterEach, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { BIN, runBin, tempRepo, type TempRepo } from "../helpers.ts";
import { makeEntry, writeTimeline } from "../timeline-fixture.ts";

const repos: TempRepo[] = [];
afterEach(() => {
  for (const r of repos.splice(0)) r.cleanup();
});
function repo(): TempRepo {
  const r = tempRepo();
  repos.push(r);
  return r;
}
const aiflare = (r: TempRepo, args: string[]) => runBin(args, { cwd: r.root, env: r.env });
const read = (r: TempRepo, rel: string) => readFileSync(join(r.root, rel), "utf8");

type Hooks = { hooks: Record<string, { matcher?: string; hooks: { command: string }[] }[]> };

describe("install and recall", () => {
  test("installs the PreToolUse hook for the editing tools and the why skill; the installed hook gives context", async () => {
    const r = repo();
    const res = await aiflare(r, ["install"]);
    expect(res.code).toBe(0);
    expect(res.stdout).toContain("recall: on: before edits, up to 1500 characters a file; at session start and after /clear");
    const doc = JSON.parse(read(r, ".claude/settings.local.json")) as Hooks;
    const pre = doc.hooks.PreToolUse!;
    expect(pre.map((g) => g.matcher)).toEqual(["Edit|Write|MultiEdit|NotebookEdit"]);
    const command = pre[0]!.hooks[0]!.command;
    expect(command).toEndWith(" hook pre-tool-use");
    const skill = read(r, ".claude/skills/why/SKILL.md");
    expect(skill).toContain("name: why");
    expect(skill).toContain(`${BIN} why --json`);
    expect(res.stdout).toContain(".claude/skills/why/SKILL.md");

    // The command exactly as installed, run the way Claude Code runs it.
    // the project's own commit: what install wrote stays untracked
    mkdirSync(join(r.root, "src"), { recursive: true });
    writeFileSync(join(r.root, "src/retry.ts"), "retry();\n");
    r.git("add", "src/retry.ts");
    r.git("commit", "-q", "-m", "Add retry");
    const hash = r.git("rev-parse", "HEAD");
    writeTimeline(r.root, r.env, {
      entries: [makeEntry({ commitHash: hash, title: "Retry uploads", intent: "Uploads failed.", changedFiles: ["src/retry.ts"], claudeSessionId: "old" })],
    });
    const p = Bun.spawnSync(["sh", "-c", command], {
      cwd: r.root,
      env: r.env,
      stdin: new Blob([JSON.stringify({ session_id: "s1", cwd: r.root, tool_name: "Edit", tool_input: { file_path: join(r.root, "src/retry.ts"), old_string: "retry();" } })]),
    });
    expect(p.exitCode).toBe(0);
    expect(JSON.parse(p.stdout.toString()).hookSpecificOutput.additionalContext).toContain("Retry uploads");

    const doctor = await aiflare(r, ["doctor"]);
    expect(doctor.stdout).toContain("✓ recall on: before edits");
    expect(doctor.stdout).toContain("✓ .claude/skills/why/SKILL.md");

    const un = await aiflare(r, ["uninstall"]);
    expect(un.code).toBe(0);
    expect(existsSync(join(r.root, ".claude/skills/why/SKILL.md"))).toBe(false);
    expect(existsSync(join(r.root, ".claude/settings.local.json"))).toBe(false);
  });

  test("Codex gets a PreToolUse hook for apply_patch", async () => {
    const r = repo();
    expect((await aiflare(r, ["install", "--agent", "codex"])).code).toBe(0);
    const doc = JSON.parse(read(r, ".codex/hooks.json")) as Hooks;
    expect(doc.hooks.PreToolUse!.map((g) => [g.matcher, g.hooks[0]!.command.split(" ").slice(-3).join(" ")])).toEqual([
      ["apply_patch|Edit|Write", "pre-tool-use --agent codex"],
    ]);
  });

  test("install --mcp merges the server into .mcp.json beside the user's; uninstall takes only aiflare's out", async () => {
    const r = repo();
    const mine = `${JSON.stringify({ mcpServers: { other: { command: "other-server", args: ["--stdio"] } }, note: "kept" }, null, 4)}\n`;
    writeFileSync(join(r.root, ".mcp.json"), mine);
    const res = await aiflare(r, ["install", "--mcp"]);
    expect(res.code).toBe(0);
    expect(res.stdout).toContain(".mcp.json");
    const doc = JSON.parse(read(r, ".mcp.json"));
    expect(doc).toEqual({
      mcpServers: { other: { command: "other-server", args: ["--stdio"] }, aiflare: { type: "stdio", command: BIN, args: ["mcp"] } },
      note: "kept",
    });
    expect(read(r, ".mcp.json")).toContain('\n    "mcpServers"');
    expect((await aiflare(r, ["install", "--mcp"])).stdout).toContain("nothing changed");
    expect((await aiflare(r, ["doctor"])).stdout).toContain("✓ MCP server aiflare registered in .mcp.json");

    // A server the user added after install stays; only aiflare's goes.
    const later = JSON.parse(read(r, ".mcp.json"));
    later.mcpServers.third = { command: "third" };
    writeFileSync(join(r.root, ".mcp.json"), JSON.stringify(later, null, 4));
    expect((await aiflare(r, ["uninstall"])).code).toBe(0);
    expect(JSON.parse(read(r, ".mcp.json"))).toEqual({
      mcpServers: { other: { command: "other-server", args: ["--stdio"] }, third: { command: "third" } },
      note: "kept",
    });
  });

  test("install --mcp creates .mcp.json when there is none, and uninstall deletes it", async () => {
    const r = repo();
    await aiflare(r, ["install", "--mcp"]);
    expect(JSON.parse(read(r, ".mcp.json")).mcpServers.aiflare.args).toEqual(["mcp"]);
    await aiflare(r, ["uninstall"]);
    expect(existsSync(join(r.root, ".mcp.json"))).toBe(false);
  });

  test("recall: false shows as off in install and doctor", async () => {
    const r = repo();
    writeFileSync(join(r.root, "aiflare.yml"), "recall: false\n");
    expect((await aiflare(r, ["install"])).stdout).toContain("recall: off");
    expect((await aiflare(r, ["doctor"])).stdout).toContain("✓ recall off");
    writeFileSync(join(r.root, "aiflare.yml"), "recall:\n  edit: false\n  maxChars: 900\n");
    expect((await aiflare(r, ["doctor"])).stdout).toContain("✓ recall on: at session start and after /clear");
    writeFileSync(join(r.root, "aiflare.yml"), "recall:\n  maxChars: 5\n");
    const bad = await aiflare(r, ["doctor"]);
    expect(bad.stdout).toContain("✗ recall unknown (aiflare.yml: recall");
  });
});
