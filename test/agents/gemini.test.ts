/**
 * Gemini CLI itself (the npm package at the pinned version) runs `gemini -p` sessions in a test repository with
 * aiflare installed, against a scripted Gemini API on 127.0.0.1: its settings parsing, hook payloads, the AfterAgent
 * answer, a resumed session, and `aiflare capture` in its shell, which has no session variable.
 */
import { afterEach, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { binary, runBin, tempRepo, type TempRepo } from "../helpers.ts";
import { fsckClean, importReproduces, records, showEntry } from "../e2e/capture-support.ts";
import { ensureAgent, runAgent } from "./install.ts";
import { geminiServer, type ModelServer, type Step } from "./model-server.ts";

setDefaultTimeout(240_000);

let cleanups: (() => void)[] = [];
beforeAll(() => {
  binary();
  ensureAgent("gemini");
});
afterEach(() => {
  for (const c of cleanups.reverse()) c();
  cleanups = [];
});

const shell = (command: string): Step => ({ tool: "run_shell_command", input: { command, description: "Run a command" } });

/** A repository, a scripted Gemini API, and a test HOME whose Gemini CLI uses an API key against it; aiflare on PATH. */
function setup(script: Step[]): { repo: TempRepo; server: ModelServer; env: Record<string, string> } {
  const repo = tempRepo();
  const server = geminiServer(script);
  cleanups.push(() => repo.cleanup(), () => server.stop());
  mkdirSync(join(repo.home, ".gemini"), { recursive: true });
  writeFileSync(join(repo.home, ".gemini", "settings.json"), JSON.stringify({ security: { auth: { selectedType: "gemini-api-key" } } }));
  const env = {
    ...repo.env,
    PATH: `${dirname(binary())}:${repo.env.PATH}`,
    GOOGLE_GEMINI_BASE_URL: server.url,
    GEMINI_API_KEY: "x",
    GEMINI_CLI_TRUST_WORKSPACE: "true",
  };
  return { repo, server, env };
}

/** `gemini -p <prompt>` (with `--resume latest` to go on with the last session) in the repository, tools allowed. */
function gemini(repo: TempRepo, env: Record<string, string>, prompt: string, resume = false) {
  const argv = [ensureAgent("gemini"), "--approval-mode", "yolo", "-m", "gemini-2.5-flash", ...(resume ? ["--resume", "latest"] : []), "-p", prompt];
  return runAgent(argv, repo.root, env);
}

describe("Gemini CLI, the real client", () => {
  test("two commits in one request, the AfterAgent reminder, capture from its shell, a commit after a resumed request", async () => {
    const { repo, server, env } = setup([
      shell("echo 'export const add = 1;' > add.ts && git add add.ts && git commit -q -m 'Add add helper'"),
      shell("echo 'export const sub = 1;' > sub.ts && git add sub.ts && git commit -q -m 'Add sub helper'"),
      { text: "Added add and sub." },
      // AfterAgent hands the commits back: the agent writes the summary, in its shell that has only GEMINI_CLI=1
      shell("aiflare capture --title 'Math helpers' --intent 'The calculator needs add and sub.' --diff-summary '- sub.ts' --tag FEATURE"),
      { text: "Summary written." },
      // the resumed session, a new request
      shell("echo 'add, sub' > NOTES.md && git add NOTES.md && git commit -q -m 'Document the helpers'"),
      { text: "Documented the helpers." },
    ]);
    const installed = await runBin(["install", "--agent", "gemini"], { cwd: repo.root, env });
    expect(installed.code).toBe(0);

    const first = await gemini(repo, env, "Add math helpers (request one)");
    expect(first.code).toBe(0);
    const [a, b] = repo.git("log", "-3", "--format=%H", "--reverse").split("\n").slice(1);
    const ea = showEntry(repo, a!)!;
    const eb = showEntry(repo, b!)!;
    expect(ea.agentType).toBe("GEMINI_CLI");
    expect(eb.agentType).toBe("GEMINI_CLI");
    expect(eb.claudeSessionId).toBe(ea.claudeSessionId);
    expect(records(ea.conversationSnippet).find((l) => l.role === "user")?.content).toBe("Add math helpers (request one)");
    expect(eb.groupRootId).toBe(a);
    // the reminder reached the model, and the capture run in Gemini's shell completed this session's newest commit
    expect(server.seen().includes("still have no summary")).toBe(true);
    expect(showEntry(repo, b!)!.intent).toBe("The calculator needs add and sub.");
    expect(showEntry(repo, b!)!.claudeSessionId).toBe(ea.claudeSessionId);

    const second = await gemini(repo, env, "Now document them (request two)", true);
    expect(second.code).toBe(0);
    const c = repo.git("rev-parse", "HEAD");
    const ec = showEntry(repo, c)!;
    expect(ec.agentType).toBe("GEMINI_CLI");
    expect(ec.claudeSessionId).toBe(ea.claudeSessionId);
    expect(records(ec.conversationSnippet).filter((l) => l.role === "user").map((l) => l.content)).toEqual(["Now document them (request two)"]);
    expect(ec.groupRootId ?? null).toBeNull();

    const list = await runBin(["history", "list", "--json"], { cwd: repo.root, env });
    expect(list.code).toBe(0);
    expect(list.stdout).toContain("GEMINI_CLI");
    // hooks print nothing Gemini would show as a stray message
    expect(first.stdout + second.stdout).not.toContain("aiflare:");
    expect(fsckClean(repo)).toBe(true);

    // import reads the same session back from Gemini's own chats (~/.gemini/tmp/<project>/chats): nothing new at
    // first; with the timeline gone, the entries the hooks wrote
    const known = JSON.parse((await runBin(["import", "--json", "--agent", "gemini"], { cwd: repo.root, env })).stdout);
    expect([known.imported, known.alreadyRecorded]).toEqual([0, 3]);
    await importReproduces(repo, env, [a!, b!, c], 3);

    // uninstall leaves Gemini's project settings as they were before install: none
    expect((await runBin(["uninstall"], { cwd: repo.root, env })).code).toBe(0);
    expect(existsSync(join(repo.root, ".gemini", "settings.json"))).toBe(false);
  });
});
