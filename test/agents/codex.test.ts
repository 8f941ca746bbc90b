/**
 * Codex itself (the npm package at the pinned version) runs `codex exec` sessions in a test repository with aiflare
 * installed, against a scripted Responses API on 127.0.0.1: its hook review, hooks.json parsing, payloads, shell
 * environment and SessionEnd.
 */
import { afterEach, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { copyFileSync, mkdirSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { binary, runBin, tempRepo, type TempRepo } from "../helpers.ts";
import { fsckClean, records, showEntry, storedTranscript, timelinePaths } from "../e2e/capture-support.ts";
import { codexEnv, codexExec, codexHome } from "./codex-support.ts";
import { ensureAgent } from "./install.ts";
import { responsesServer, type ModelServer, type Step } from "./model-server.ts";

setDefaultTimeout(180_000);

let cleanups: (() => void)[] = [];
beforeAll(() => {
  binary();
  ensureAgent("codex");
});
afterEach(() => {
  for (const c of cleanups.reverse()) c();
  cleanups = [];
});

const shell = (cmd: string): Step => ({ tool: "exec_command", input: { cmd } });

/** A repository, a scripted Responses API and a test HOME whose Codex talks to it; `codex` on PATH. */
function setup(script: Step[]): { repo: TempRepo; server: ModelServer; env: Record<string, string> } {
  const repo = tempRepo();
  const server = responsesServer(script);
  cleanups.push(() => repo.cleanup(), () => server.stop());
  codexHome(repo, server);
  const env = { ...codexEnv(repo), PATH: `${dirname(ensureAgent("codex"))}:${codexEnv(repo).PATH}` };
  return { repo, server, env };
}

const aiflare = (repo: TempRepo, env: Record<string, string>, ...args: string[]) => runBin(args, { cwd: repo.root, env, timeoutMs: 60_000 });

describe("Codex, the real client", () => {
  test("hooks run only once approved: install says how, doctor tells, --approve-codex-hooks records it as Codex does", async () => {
    const { repo, server, env } = setup([
      shell("echo a > a.txt && git add a.txt && git commit -q -m 'feat: a'"),
      { text: "Committed a." },
      shell("echo b > b.txt && git add b.txt && git commit -q -m 'feat: b'"),
      { text: "Committed b." },
      // Codex's Stop hook hands the commit back to the model once
      shell(`${binary()} capture --title 'Add b' --intent 'Why b.' --diff-summary '- b.txt' --tag FEATURE`),
      { text: "Summary of b written, last reply." },
    ]);
    const installed = await aiflare(repo, env, "install", "--agent", "codex");
    expect(installed.code).toBe(0);
    expect(installed.stdout).toContain("--approve-codex-hooks");

    // unapproved: Codex runs the session and none of the hooks, without a warning
    expect((await codexExec(repo, "Add a.")).code).toBe(0);
    expect(repo.git("log", "-1", "--format=%s")).toBe("feat: a");
    expect(timelinePaths(repo)).toEqual([]);
    const before = await aiflare(repo, env, "doctor");
    expect(before.code).not.toBe(0);
    expect(before.stdout).toContain("Codex skips");
    expect(before.stdout).toContain("--approve-codex-hooks");

    const approved = await aiflare(repo, env, "install", "--agent", "codex", "--approve-codex-hooks");
    expect(approved.code).toBe(0);
    expect(approved.stdout).toMatch(/approved 6 aiflare hooks/);
    const config = readFileSync(join(repo.home, ".codex", "config.toml"), "utf8");
    expect(config).toContain(`[hooks.state."${join(repo.root, ".codex", "hooks.json")}:session_end:0:0"]`);
    expect(config).toMatch(/trusted_hash = "sha256:[0-9a-f]{64}"/);
    expect(config).toContain(`base_url = "${server.url}/v1"`); // the rest of the user's file is untouched
    const after = await aiflare(repo, env, "doctor");
    expect(after.stdout).toContain("Codex runs aiflare's 6 hooks (approved)");

    const run = await codexExec(repo, "Add b.");
    expect(run.code).toBe(0);
    const head = repo.git("rev-parse", "HEAD");
    const entry = showEntry(repo, head)!;
    expect(entry.agentType).toBe("CODEX");
    expect(entry.claudeSessionId).toBe(run.sessionId!);
    expect(records(entry.conversationSnippet).find((l) => l.role === "user")?.content).toBe("Add b.");
    // SessionEnd, at the end of `codex exec`, stored the session with its last reply
    expect(records(storedTranscript(repo, run.sessionId!)).at(-1)).toEqual({ role: "assistant", content: "Summary of b written, last reply." });
    // the Stop reminder reached the model, and the agent wrote the summary
    expect(server.seen().includes("still has no summary")).toBe(true);
    expect(showEntry(repo, head)!.intent).toBe("Why b.");
    // the capture skill is where Codex discovers skills, and it reached the model
    const seen = server.seen();
    expect(seen.includes(`${repo.root}/.agents/skills`)).toBe(true);
    expect(seen.includes("- context-capture: Records why a commit was made.")).toBe(true);
    expect(fsckClean(repo)).toBe(true);

    // the binary moves and is installed again: Codex sees changed hooks, and doctor says so
    const moved = join(repo.dir, "elsewhere", "aiflare");
    mkdirSync(dirname(moved), { recursive: true });
    copyFileSync(binary(), moved);
    Bun.spawnSync(["chmod", "755", moved]);
    expect((await runBin(["install", "--agent", "codex"], { cwd: repo.root, env })).code).toBe(0);
    const r = Bun.spawnSync([moved, "install", "--agent", "codex"], { cwd: repo.root, env });
    expect(r.exitCode).toBe(0);
    const stale = Bun.spawnSync([moved, "doctor"], { cwd: repo.root, env });
    expect(stale.stdout.toString()).toMatch(/Codex skips 6 of aiflare's 6 hooks until they are approved \(modified/);
  });

  test("aiflare capture in Codex's shell completes this session's commit, not a newer HEAD", async () => {
    const { repo, env } = setup([
      shell("echo x > x.txt && git add x.txt && git commit -q -m 'feat: x'"),
      { text: "Committed x." },
      // reminded at Stop, the agent puts it off
      { text: "I will write its summary when asked." },
      // as the skill shows it: the binary's absolute path (Codex runs commands in a login shell, with the profile's PATH)
      shell(`${binary()} capture --title 'Add x' --intent 'Why x: the report needs it.' --diff-summary '- x.txt' --tag FEATURE`),
      { text: "Summary written." },
    ]);
    expect((await aiflare(repo, env, "install", "--agent", "codex", "--approve-codex-hooks")).code).toBe(0);
    const first = await codexExec(repo, "Add x.");
    expect(first.code).toBe(0);
    const x = repo.git("rev-parse", "HEAD");
    expect(showEntry(repo, x)?.summaryStatus).toBe("pending");
    // someone else commits on top
    const y = repo.commit("human: y", { "y.txt": "y\n" });
    const second = await codexExec(repo, "Write the summary.", first.sessionId);
    expect(second.code).toBe(0);
    const ex = showEntry(repo, x)!;
    expect(ex.intent).toBe("Why x: the report needs it.");
    expect(ex.agentType).toBe("CODEX");
    expect(showEntry(repo, y)).toBeNull();
  });
});
