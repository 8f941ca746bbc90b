/**
 * Qwen Code itself (the npm package at the pinned version) runs non-interactive sessions (`qwen -p`, then
 * `--continue`) in a test repository with `aiflare install --agent qwen`, against a scripted OpenAI-compatible Chat
 * Completions API on 127.0.0.1: its settings file, payloads, shell environment and what its hooks hand the model.
 */
import { afterEach, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { binary, runBin, tempRepo, type TempRepo } from "../helpers.ts";
import { fsckClean, importReproduces, records, showEntry } from "../e2e/capture-support.ts";
import { ensureAgent, runAgent } from "./install.ts";
import { chatCompletionsServer, type ModelServer, type Step } from "./model-server.ts";

setDefaultTimeout(180_000);

let cleanups: (() => void)[] = [];
beforeAll(() => {
  binary();
  ensureAgent("qwen");
});
afterEach(() => {
  for (const c of cleanups.reverse()) c();
  cleanups = [];
});

const shell = (command: string): Step => ({ tool: "run_shell_command", input: { command, description: "Run a command", is_background: false } });

function setup(script: Step[]): { repo: TempRepo; server: ModelServer; env: Record<string, string> } {
  const repo = tempRepo();
  const server = chatCompletionsServer(script);
  cleanups.push(() => repo.cleanup(), () => server.stop());
  const env = {
    ...repo.env,
    PATH: `${dirname(binary())}:${repo.env.PATH}`,
    OPENAI_BASE_URL: `${server.url}/v1`,
    OPENAI_API_KEY: "x",
    OPENAI_MODEL: "mock-model",
  };
  return { repo, server, env };
}

/** `qwen -p <prompt>` (with `--continue`: the same session) in the repository, tools allowed. */
function qwen(repo: TempRepo, env: Record<string, string>, prompt: string, resume = false) {
  const argv = [ensureAgent("qwen"), "--auth-type", "openai", "--approval-mode", "yolo", ...(resume ? ["--continue"] : []), "-p", prompt];
  return runAgent(argv, repo.root, env);
}

describe("Qwen Code, the real client", () => {
  test("two requests, three commits: grouped by request, agentType QWEN_CODE, the why written through aiflare capture", async () => {
    const capture = `${binary()} capture --title 'Add sub' --intent 'Why sub: the report subtracts.' --diff-summary '- sub.ts' --tag FEATURE`;
    const { repo, server, env } = setup([
      shell("printf 'export const add = 1;\\n' > add.ts && git add add.ts && git commit -q -m 'Add add helper'"),
      shell("printf 'export const sub = 1;\\n' > sub.ts && git add sub.ts && git commit -q -m 'Add sub helper'"),
      { text: "Added add and sub." },
      // Stop hands the commits without a summary back to the model once
      shell(capture),
      { text: "Summary of sub written." },
      // the second request
      shell("printf '# Math\\n' > MATH.md && git add MATH.md && git commit -q -m 'Document math helpers'"),
      { text: "Documented." },
    ]);
    const installed = await runBin(["install", "--agent", "qwen"], { cwd: repo.root, env });
    expect(installed.code).toBe(0);

    const first = await qwen(repo, env, "Add math helpers");
    expect(first.code).toBe(0);
    expect(server.remaining()).toBe(2);
    const [add, sub] = [repo.git("rev-parse", "HEAD~1"), repo.git("rev-parse", "HEAD")];
    const a = showEntry(repo, add)!;
    const b = showEntry(repo, sub)!;
    expect(a.agentType).toBe("QWEN_CODE");
    expect(a.groupRootId).toBeNull();
    expect(b.groupRootId).toBe(add);
    expect(b.claudeSessionId).toBe(a.claudeSessionId);
    // Qwen's empty UserPromptSubmit after each tool result is not a prompt
    expect(records(a.conversationSnippet)).toEqual([{ role: "user", content: "Add math helpers" }]);
    // the commit hook's request for the why reached the model, then the Stop reminder, and the agent wrote it
    expect(server.seen()).toContain("aiflare recorded commit");
    // (Qwen Code reads Stop's `decision: "block"` as the next user message)
    expect(server.seen()).toContain("still have no summary");
    expect(showEntry(repo, sub)!.intent).toBe("Why sub: the report subtracts.");

    const second = await qwen(repo, env, "Now document them", true);
    expect(second.code).toBe(0);
    const docs = repo.git("rev-parse", "HEAD");
    const c = showEntry(repo, docs)!;
    expect(c.agentType).toBe("QWEN_CODE");
    expect(c.claudeSessionId).toBe(a.claudeSessionId);
    // a new request: a new group, its prompt in the delta after the first request's last reply
    expect(c.groupRootId).toBeNull();
    expect(records(c.conversationSnippet).filter((l) => l.role === "user")).toEqual([{ role: "user", content: "Now document them" }]);
    expect(records(c.conversationSnippet)).toContainEqual({ role: "assistant", content: "Summary of sub written." });

    const list = await runBin(["history", "list", "--json"], { cwd: repo.root, env });
    const byHash = new Map((JSON.parse(list.stdout) as Record<string, any>[]).map((e) => [e.commitHash, e]));
    expect([add, sub, docs].map((h) => [byHash.get(h)?.groupRootId, byHash.get(h)?.agentType])).toEqual([
      [null, "QWEN_CODE"],
      [add, "QWEN_CODE"],
      [null, "QWEN_CODE"],
    ]);
    expect(fsckClean(repo)).toBe(true);

    // import reads the same session back from Qwen's own store (~/.qwen/projects/<cwd>/chats/<id>.jsonl): nothing
    // new at first; with the timeline gone, the entries the hooks wrote: the same session, groups and prompts
    const known = JSON.parse((await runBin(["import", "--json", "--agent", "qwen"], { cwd: repo.root, env })).stdout);
    expect(known.sessions.map((s: { sessionId: string }) => s.sessionId)).toEqual([a.claudeSessionId]);
    expect([known.imported, known.alreadyRecorded]).toEqual([0, 3]);
    await importReproduces(repo, env, [add, sub, docs], 3);

    // uninstall leaves Qwen's project settings as they were before install: none
    expect((await runBin(["uninstall"], { cwd: repo.root, env })).code).toBe(0);
    expect(existsSync(join(repo.root, ".qwen", "settings.json"))).toBe(false);
  });
});
