/**
 * Agents that speak Claude Code's hooks (Qwen Code, Factory Droid), end to end: their payloads, replayed in order
 * through the compiled binary against a temp repository where the shell commands really run and really commit.
 */
import { afterEach, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { binary, runBin, runHook, tempRepo, type TempRepo, untimed } from "../helpers.ts";
import { capture, fsckClean, records, showEntry } from "./capture-support.ts";

const FIX = join(import.meta.dir, "..", "fixtures", "agents");
const HOOK_EVENT: Record<string, string> = {
  SessionStart: "session-start",
  UserPromptSubmit: "user-prompt-submit",
  PreToolUse: "pre-tool-use",
  PostToolUse: "post-tool-use",
  Stop: "stop",
  SessionEnd: "session-end",
};

let repo: TempRepo | undefined;
afterEach(() => {
  repo?.cleanup();
  repo = undefined;
});

/** The payload re-addressed to the temp repository; a shell command loses its part that wrote outside the recording. */
function readdress(r: TempRepo, payload: Record<string, any>): Record<string, any> {
  const out: Record<string, any> = { ...payload, cwd: r.root, transcript_path: join(r.home, "none.jsonl") };
  const cmd = payload.tool_input?.command;
  if (typeof cmd === "string") out.tool_input = { ...payload.tool_input, command: cmd.replace(/ && env \|.*$/, "") };
  return out;
}

/** Runs a shell command in the repository as the agent's shell tool did. */
function runShell(r: TempRepo, command: string): void {
  const p = Bun.spawnSync(["bash", "-c", command], { cwd: r.root, env: r.env });
  if (p.exitCode !== 0) throw new Error(`${command}: ${p.stderr.toString()}`);
}

/** Entries of `history list --json`, oldest first. */
async function listed(r: TempRepo): Promise<Record<string, any>[]> {
  const out = await runBin(["history", "list", "--json"], { cwd: r.root, env: r.env });
  expect(out.code).toBe(0);
  return (JSON.parse(out.stdout) as Record<string, any>[]).sort((a, b) => a.committedAt.localeCompare(b.committedAt) || a.recordedAt.localeCompare(b.recordedAt));
}

describe("Qwen Code (payloads recorded from 0.24.4)", () => {
  test("two requests, three commits: grouped by request, agentType QWEN_CODE, continuations are not prompts", async () => {
    repo = tempRepo();
    const r = repo;
    const lines = readFileSync(join(FIX, "qwen", "all.jsonl"), "utf8").split("\n").filter(Boolean);
    const hashes: string[] = [];
    for (const line of lines) {
      const { event, payload } = JSON.parse(line) as { event: string; payload: Record<string, any> };
      const hookEvent = HOOK_EVENT[event];
      if (!hookEvent) continue;
      const p = readdress(r, payload);
      if (event === "PostToolUse") {
        runShell(r, p.tool_input.command);
        hashes.push(r.git("rev-parse", "HEAD"));
      }
      const out = await runHook(r, hookEvent, p, { agent: "qwen" });
      expect(out.code).toBe(0);
      if (event === "PostToolUse") {
        // the agent is asked for its summary through Claude's hookSpecificOutput, which Qwen Code reads
        expect(JSON.parse(out.stdout).hookSpecificOutput.additionalContext).toContain(hashes.at(-1)!.slice(0, 7));
      }
    }
    expect(hashes).toHaveLength(3);
    const [a, b, c] = hashes.map((h) => showEntry(r, h)!);
    for (const e of [a!, b!, c!]) {
      expect(e.agentType).toBe("QWEN_CODE");
      expect(e.claudeSessionId).toBe("dd5921c3-aca4-4a72-9537-876aa97cd748");
    }
    expect(a!.groupRootId).toBeNull();
    expect(b!.groupRootId).toBe(hashes[0]!);
    // the second request (after --continue) starts a new group
    expect(c!.groupRootId).toBeNull();
    // Qwen's empty UserPromptSubmit on each tool result left no line: one prompt in the first delta, none in the second
    expect(records(a!.conversationSnippet)).toEqual([{ role: "user", content: "Add math helpers (qwen request one)" }]);
    expect(b!.conversationSnippet).toBe("");
    expect(records(c!.conversationSnippet)).toEqual([
      { role: "assistant", content: "Added add and sub. Next: document them." },
      { role: "user", content: "Now document them (qwen request two)" },
    ]);
    expect(c!.model).toBe("mock-model");

    // history list shows the same
    const list = await listed(r);
    expect(list.map((e) => [e.commitHash, e.groupRootId, e.agentType])).toEqual([
      [hashes[0], null, "QWEN_CODE"],
      [hashes[1], hashes[0], "QWEN_CODE"],
      [hashes[2], null, "QWEN_CODE"],
    ]);
    const text = await runBin(["history", "list"], { cwd: r.root, env: r.env });
    expect(text.stdout).toContain("Qwen Code");

    // the why, written by the agent: aiflare capture finds the session through Qwen's shell variable
    const env = Object.fromEntries(
      readFileSync(join(FIX, "qwen", "shell-env-2.txt"), "utf8")
        .split("\n")
        .filter(Boolean)
        .map((l) => [l.slice(0, l.indexOf("=")), l.slice(l.indexOf("=") + 1)]),
    );
    const cap = await capture(r, ["--title", "Document math helpers", "--intent", "why: the helpers had no docs", "--tag", "DOCS"], env);
    expect(cap.code).toBe(0);
    const c2 = showEntry(r, hashes[2]!)!;
    expect(c2.intent).toBe("why: the helpers had no docs");
    expect(c2.agentType).toBe("QWEN_CODE");
    expect(c2.summaryStatus).not.toBe("pending");
    expect(fsckClean(r)).toBe(true);
  });
});

describe("Factory Droid (payloads from its documented shapes)", () => {
  const load = (name: string) => JSON.parse(readFileSync(join(FIX, "droid", name), "utf8")) as Record<string, any>;

  test("a compaction's new session id continues the old one's conversation and group", async () => {
    repo = tempRepo();
    const r = repo;
    const hook = (event: string, name: string, over: Record<string, any> = {}) =>
      runHook(r, event, { ...readdress(r, load(name)), ...over }, { agent: "droid" });
    const start = load("SessionStart.json");
    const compact = load("SessionStart.compact.json");
    const bash = load("PostToolUse.json");
    const commit = async (sessionId: string, file: string, message: string) => {
      const command = `printf 'x\\n' > ${file} && git add ${file} && git commit -q -m '${message}'`;
      runShell(r, command);
      const out = await hook("post-tool-use", "PostToolUse.json", { session_id: sessionId, tool_input: { ...bash.tool_input, command } });
      expect(out.code).toBe(0);
      return r.git("rev-parse", "HEAD");
    };

    expect((await hook("session-start", "SessionStart.json")).code).toBe(0);
    await hook("user-prompt-submit", "UserPromptSubmit.json");
    const first = await commit(start.session_id, "slug.ts", "Add slugify helper");
    // the context window fills up: Droid compacts and goes on under a new id
    expect((await hook("session-start", "SessionStart.compact.json")).code).toBe(0);
    const second = await commit(compact.session_id, "router.ts", "Use slugify in the router");
    await hook("user-prompt-submit", "UserPromptSubmit.json", { session_id: compact.session_id, prompt: "Now add tests" });
    const third = await commit(compact.session_id, "slug.test.ts", "Test slugify");

    const [a, b, c] = [first, second, third].map((h) => showEntry(r, h)!);
    for (const e of [a!, b!, c!]) {
      expect(e.agentType).toBe("FACTORY_DROID");
      expect(e.claudeSessionId).toBe(start.session_id);
    }
    expect(a!.groupRootId).toBeNull();
    // no new prompt since the compaction: the same request goes on
    expect(b!.groupRootId).toBe(first);
    expect(b!.conversationSnippet).toBe("");
    // a prompt under the new id is a new request of the same conversation
    expect(c!.groupRootId).toBeNull();
    expect(records(c!.conversationSnippet)).toEqual([{ role: "user", content: "Now add tests" }]);
    expect(existsSync(join(r.root, ".context-capture", `.droid-prompts-${compact.session_id}`))).toBe(false);
    expect(fsckClean(r)).toBe(true);
  });
});

describe("install --agent qwen", () => {
  const settingsPath = (r: TempRepo) => join(r.root, ".qwen", "settings.json");
  const mine = '{\n  "model": { "name": "qwen3-coder" },\n  "hooks": {\n    "Stop": [{ "hooks": [{ "type": "command", "command": "notify-send done" }] }]\n  }\n}\n';

  test("merges into .qwen/settings.json, doctor reads it, a hook command from it records, uninstall restores it byte for byte", async () => {
    repo = tempRepo();
    const r = repo;
    mkdirSync(join(r.root, ".qwen"));
    writeFileSync(settingsPath(r), mine);
    const out = await runBin(["install", "--agent", "qwen"], { cwd: r.root, env: r.env });
    expect(out.code).toBe(0);
    expect(out.stdout).toContain(".qwen/settings.json");
    expect(out.stdout).toContain("QWEN_CODE_SESSION_ID");
    expect(existsSync(join(r.root, ".claude", "settings.local.json"))).toBe(false);
    const doc = JSON.parse(readFileSync(settingsPath(r), "utf8"));
    // the user's own keys and hooks stay
    expect(doc.model).toEqual({ name: "qwen3-coder" });
    expect(doc.hooks.Stop.flatMap((g: any) => g.hooks.map((h: any) => h.command))).toContain("notify-send done");
    const post = doc.hooks.PostToolUse.find((g: any) => g.matcher === "run_shell_command");
    expect(post.hooks[0].command).toBe(`${binary()} hook post-tool-use --agent qwen`);

    const doctor = await runBin(["doctor"], { cwd: r.root, env: r.env });
    expect(doctor.stdout).toContain("✓ Qwen Code hooks in .qwen/settings.json");
    expect(doctor.stdout).not.toContain("no agent hooks");

    // the installed command, run as Qwen Code runs it, records under the qwen prefix
    const prompt = doc.hooks.UserPromptSubmit[0].hooks[0].command as string;
    const payload = readdress(r, JSON.parse(readFileSync(join(FIX, "qwen", "UserPromptSubmit.json"), "utf8")));
    const p = Bun.spawnSync(["sh", "-c", prompt], { cwd: r.root, env: r.env, stdin: new Blob([JSON.stringify(payload)]) });
    expect(p.exitCode).toBe(0);
    const log = readFileSync(join(r.root, ".context-capture", `.qwen-prompts-${payload.session_id}`), "utf8");
    expect(log).toEndWith("}\n");
    expect(untimed(log.split("\n").filter(Boolean).map((l) => JSON.parse(l) as object))).toEqual([{ role: "user", content: "Add math helpers (qwen request one)" }]);

    // doctor names a hook entry taken out
    const broken = JSON.parse(readFileSync(settingsPath(r), "utf8"));
    const full = readFileSync(settingsPath(r), "utf8");
    delete broken.hooks.PostToolUse;
    writeFileSync(settingsPath(r), JSON.stringify(broken, null, 2) + "\n");
    const bad = await runBin(["doctor"], { cwd: r.root, env: r.env });
    expect(bad.code).toBe(1);
    expect(bad.stdout).toMatch(/✗ Qwen Code hooks in \.qwen\/settings\.json lack PostToolUse/);
    writeFileSync(settingsPath(r), full);

    expect((await runBin(["uninstall"], { cwd: r.root, env: r.env })).code).toBe(0);
    expect(readFileSync(settingsPath(r), "utf8")).toBe(mine);
  });

  test("a settings file install created, which Qwen Code stamped with its $version, goes at uninstall", async () => {
    repo = tempRepo();
    const r = repo;
    expect((await runBin(["install", "--agent", "qwen"], { cwd: r.root, env: r.env })).code).toBe(0);
    // Qwen Code 0.24 writes its settings format version into a settings file it reads
    const doc = JSON.parse(readFileSync(settingsPath(r), "utf8"));
    writeFileSync(settingsPath(r), JSON.stringify({ $version: 4, ...doc }, null, 2) + "\n");
    expect((await runBin(["uninstall"], { cwd: r.root, env: r.env })).code).toBe(0);
    expect(existsSync(settingsPath(r))).toBe(false);
  });
});

describe("install --agent droid", () => {
  const mine = '{\n  "model": "claude-sonnet",\n  "hooks": {\n    "Stop": [{ "hooks": [{ "type": "command", "command": "notify-send done" }] }]\n  }\n}\n';

  test("writes the user's ~/.factory/settings.json only with --factory-user-settings; uninstall with it restores the file", async () => {
    repo = tempRepo();
    const r = repo;
    const userFile = join(r.home, ".factory", "settings.json");
    const refused = await runBin(["install", "--agent", "droid"], { cwd: r.root, env: r.env });
    expect(refused.code).not.toBe(0);
    expect(refused.stderr + refused.stdout).toContain("--factory-user-settings");
    expect(existsSync(join(r.home, ".factory"))).toBe(false);
    expect(r.git("status", "--porcelain")).toBe("");

    mkdirSync(join(r.home, ".factory"));
    writeFileSync(userFile, mine);
    const out = await runBin(["install", "--agent", "droid", "--factory-user-settings"], { cwd: r.root, env: r.env });
    expect(out.code).toBe(0);
    expect(out.stdout).toContain("every project");
    const doc = JSON.parse(readFileSync(userFile, "utf8"));
    expect(doc.model).toBe("claude-sonnet");
    expect(doc.hooks.Stop.flatMap((g: any) => g.hooks.map((h: any) => h.command))).toContain("notify-send done");
    const post = doc.hooks.PostToolUse.find((g: any) => g.matcher === "Execute");
    expect(post.hooks[0].command).toBe(`${binary()} hook post-tool-use --agent droid`);

    const doctor = await runBin(["doctor"], { cwd: r.root, env: r.env });
    expect(doctor.stdout).toContain("✓ Factory Droid hooks in ~/.factory/settings.json");

    // the installed command, run as Droid runs it, records under the droid prefix
    const payload = readdress(r, JSON.parse(readFileSync(join(FIX, "droid", "UserPromptSubmit.json"), "utf8")));
    const p = Bun.spawnSync(["sh", "-c", doc.hooks.UserPromptSubmit[0].hooks[0].command], { cwd: r.root, env: r.env, stdin: new Blob([JSON.stringify(payload)]) });
    expect(p.exitCode).toBe(0);
    expect(existsSync(join(r.root, ".context-capture", `.droid-prompts-${payload.session_id}`))).toBe(true);

    const un = await runBin(["uninstall", "--factory-user-settings"], { cwd: r.root, env: r.env });
    expect(un.code).toBe(0);
    expect(readFileSync(userFile, "utf8")).toBe(mine);
    expect(existsSync(`${userFile}.aiflare-backup`)).toBe(false);
  });
});
