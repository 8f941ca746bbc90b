/**
 * OpenCode itself (the npm package at the pinned version) runs non-interactive sessions (`opencode run`, then
 * `run --continue`) in a test repository with `aiflare install --agent opencode`, against a scripted OpenAI-compatible
 * Chat Completions API on 127.0.0.1: aiflare's plugin in `.opencode/plugins/`, what it hands the model, a subagent's
 * commit, the shell's session id for `aiflare capture`, import from OpenCode's database and uninstall.
 */
import { afterEach, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { binary, runBin, tempRepo, type TempRepo } from "../helpers.ts";
import { fsckClean, records, showEntry } from "../e2e/capture-support.ts";
import { ensureAgent, runAgent } from "./install.ts";
import { chatCompletionsServer, type ModelServer, type Step } from "./model-server.ts";

setDefaultTimeout(600_000);

let cleanups: (() => void)[] = [];
beforeAll(() => {
  binary();
  ensureAgent("opencode");
});
afterEach(() => {
  for (const c of cleanups.reverse()) c();
  cleanups = [];
});

const bash = (command: string): Step => ({ tool: "bash", input: { command, description: "Run a command" } });

/**
 * OpenCode installs `@opencode-ai/plugin` into each of its config folders at every start and, once a plugin is
 * loaded, waits for that install; offline it retries for over a minute. These files are what a finished install
 * leaves (the npm registry is not reached from the tests), so OpenCode finds nothing to do.
 */
function settleDependencies(dir: string): void {
  mkdirSync(join(dir, "node_modules"), { recursive: true });
  const deps = { "@opencode-ai/plugin": "1.18.33" };
  writeFileSync(join(dir, "package.json"), JSON.stringify({ dependencies: deps }));
  writeFileSync(join(dir, "package-lock.json"), JSON.stringify({ lockfileVersion: 3, packages: { "": { dependencies: deps } } }));
}

/** A repository, a scripted model, and a test HOME whose OpenCode uses it as its only provider; aiflare on PATH. */
function setup(script: Step[]): { repo: TempRepo; server: ModelServer; env: Record<string, string> } {
  const repo = tempRepo();
  const server = chatCompletionsServer(script, "bash");
  cleanups.push(() => repo.cleanup(), () => server.stop());
  const config = join(repo.home, ".config", "opencode");
  mkdirSync(config, { recursive: true });
  writeFileSync(
    join(config, "opencode.json"),
    JSON.stringify({
      provider: { mock: { npm: "@ai-sdk/openai-compatible", name: "Mock", options: { baseURL: `${server.url}/v1`, apiKey: "x" }, models: { "mock-model": { name: "Mock" } } } },
      model: "mock/mock-model",
    }),
  );
  settleDependencies(config);
  settleDependencies(join(repo.root, ".opencode"));
  const env = {
    ...repo.env,
    PATH: `${dirname(binary())}:${repo.env.PATH}`,
    XDG_CONFIG_HOME: join(repo.home, ".config"),
    XDG_DATA_HOME: join(repo.home, ".local", "share"),
    XDG_CACHE_HOME: join(repo.home, ".cache"),
    XDG_STATE_HOME: join(repo.home, ".local", "state"),
    OPENCODE_DISABLE_AUTOUPDATE: "1",
    OPENCODE_DISABLE_MODELS_FETCH: "1",
    OPENCODE_DISABLE_DEFAULT_PLUGINS: "1",
    OPENCODE_DISABLE_LSP_DOWNLOAD: "1",
    OPENCODE_DISABLE_SHARE: "1",
  };
  return { repo, server, env };
}

/**
 * `opencode run <words>` (with `--continue`: the last session) in the repository. OpenCode takes 20 to 40 s to start on
 * a busy 2-core machine: a run may take a few minutes there.
 */
function opencode(repo: TempRepo, env: Record<string, string>, words: string[], resume = false) {
  return runAgent([ensureAgent("opencode"), "run", ...(resume ? ["--continue"] : []), ...words], repo.root, env, 240_000);
}

describe("OpenCode, the real client", () => {
  test("two requests: commits grouped by request, a subagent's commit in its parent's session, capture, recall, import, uninstall", async () => {
    const capture = `aiflare capture --title 'Add sub' --intent 'Why sub: the report subtracts.' --diff-summary '- sub.ts' --tag FEATURE`;
    const { repo, server, env } = setup([
      bash("printf 'export const add = 1;\\n' > add.ts && git add add.ts && git commit -q -m 'Add add helper'"),
      bash("printf 'export const sub = 1;\\n' > sub.ts && git add sub.ts && git commit -q -m 'Add sub helper'"),
      // the commit hook's request for the why came back with the tool's output: the agent writes it, in a shell
      // that knows the session through the plugin's OPENCODE_SESSION_ID
      bash(capture),
      { text: "Added add and sub." },
      // the second request hands the documentation to a subagent (a child session)
      { tool: "task", input: { description: "Document helpers", prompt: "Write MATH.md and commit it", subagent_type: "general" } },
      bash("printf '# Math\\n' > MATH.md && git add MATH.md && git commit -q -m 'Document math helpers'"),
      { text: "MATH.md committed." },
      { text: "Documented." },
    ]);
    // (with its $schema: OpenCode adds one to a project config that lacks it)
    const project = { $schema: "https://opencode.ai/config.json", permission: { bash: "allow", edit: "allow", task: "allow" } };
    writeFileSync(join(repo.root, "opencode.json"), JSON.stringify(project));
    writeFileSync(join(repo.root, "AGENTS.md"), "# Agents\n\nKeep commits small.\n");
    repo.git("add", "-A");
    repo.git("commit", "-q", "-m", "Project setup");
    const watched = ["AGENTS.md", ".gitignore", "opencode.json", ".opencode/package.json", ".opencode/plugins/aiflare.js", ".claude/skills/context-capture/SKILL.md"];
    const before = watched.map((rel) => [rel, existsSync(join(repo.root, rel)) ? readFileSync(join(repo.root, rel), "utf8") : null]);

    const installed = await runBin(["install", "--agent", "opencode"], { cwd: repo.root, env });
    expect(installed.code).toBe(0);
    expect(readFileSync(join(repo.root, ".opencode/plugins/aiflare.js"), "utf8")).toContain(JSON.stringify(binary()));
    const doctor = await runBin(["doctor", "--json"], { cwd: repo.root, env });
    expect(doctor.stdout).toContain("hooks:opencode");

    const first = await opencode(repo, env, ["Add", "math", "helpers"]);
    expect(first.code).toBe(0);
    expect(server.remaining()).toBe(4);
    const [add, sub] = [repo.git("rev-parse", "HEAD~1"), repo.git("rev-parse", "HEAD")];
    const a = showEntry(repo, add)!;
    const b = showEntry(repo, sub)!;
    expect(a.agentType).toBe("OPENCODE");
    expect(a.claudeSessionId).toMatch(/^ses_/);
    expect(a.groupRootId).toBeNull();
    expect(b.groupRootId).toBe(add);
    expect(b.claudeSessionId).toBe(a.claudeSessionId);
    expect(records(a.conversationSnippet)).toEqual([{ role: "user", content: "Add math helpers" }]);
    // the commit hook's context reached the model with the bash tool's output, and capture found the session
    expect(server.seen()).toContain("aiflare recorded commit");
    expect(b.intent).toBe("Why sub: the report subtracts.");
    // the capture skill (Claude Code's folder, which OpenCode reads) is offered to the model
    expect(server.seen()).toContain("context-capture");

    const second = await opencode(repo, env, ["Now", "document", "them"], true);
    expect(second.code).toBe(0);
    expect(server.remaining()).toBe(0);
    const docs = repo.git("rev-parse", "HEAD");
    expect(repo.git("log", "-1", "--format=%s")).toBe("Document math helpers");
    const c = showEntry(repo, docs)!;
    expect(c.agentType).toBe("OPENCODE");
    // the subagent's commit belongs to the top session, in the second request's group
    expect(c.claudeSessionId).toBe(a.claudeSessionId);
    expect(c.groupRootId).toBeNull();
    const lines = records(c.conversationSnippet);
    // the subagent's instructions are not the user's prompt; the first request's reply came at its turn's end
    expect(lines.filter((l) => l.role === "user")).toEqual([{ role: "user", content: "Now document them" }]);
    expect(lines).toContainEqual({ role: "assistant", content: "Added add and sub." });
    // recall at the second run's start: the latest recorded work, in the system prompt
    const lastRun = server.requests.filter((r) => r.main).at(-1)!;
    const system = (lastRun.body.messages as { role: string }[]).filter((m) => m.role === "system");
    expect(JSON.stringify(system)).toContain("aiflare: the latest recorded work");

    const list = await runBin(["history", "list", "--json"], { cwd: repo.root, env });
    const byHash = new Map((JSON.parse(list.stdout) as Record<string, any>[]).map((e) => [e.commitHash, e]));
    expect([add, sub, docs].map((h) => [byHash.get(h)?.groupRootId, byHash.get(h)?.agentType])).toEqual([
      [null, "OPENCODE"],
      [add, "OPENCODE"],
      [null, "OPENCODE"],
    ]);
    expect(fsckClean(repo)).toBe(true);

    // import reads OpenCode's database: the same session and commits, already recorded
    const imported = await runBin(["import", "--agent", "opencode", "--dry-run", "--json"], { cwd: repo.root, env });
    expect(imported.code).toBe(0);
    const summary = JSON.parse(imported.stdout) as { sessions: { sessionId: string; agent: string; commits: { hash: string; status: string }[] }[] };
    expect(summary.sessions.map((s) => [s.sessionId, s.agent])).toEqual([[a.claudeSessionId, "opencode"]]);
    expect(summary.sessions[0]!.commits.map((x) => [x.hash, x.status])).toEqual([
      [add, "recorded"],
      [sub, "recorded"],
      [docs, "recorded"],
    ]);

    const removed = await runBin(["uninstall"], { cwd: repo.root, env });
    expect(removed.code).toBe(0);
    expect(watched.map((rel) => [rel, existsSync(join(repo.root, rel)) ? readFileSync(join(repo.root, rel), "utf8") : null])).toEqual(before);
  });
});
