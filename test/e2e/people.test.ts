/**
 * Who ran a session and with what (SPEC §4): the person (`author`), the agent's `model` and the session a `/clear`
 * handoff continued (`continuedFrom`), recorded by the compiled binary's hooks fed real Claude Code payloads, and
 * `history list --author`.
 */
import { afterEach, describe, expect, setDefaultTimeout, test } from "bun:test";
import { join } from "node:path";
import { runBin, runHook, tempRepo, type TempRepo } from "../helpers.ts";
import { agentCommit, capture, endTemplate, session, showEntry, startTemplate } from "./capture-support.ts";

setDefaultTimeout(60_000);

let repo: TempRepo | undefined;
afterEach(() => {
  repo?.cleanup();
  repo = undefined;
});

/** The SessionStart and SessionEnd Claude Code sends, re-addressed to the temp repository. */
function lifecycle(r: TempRepo, id: string) {
  const base = { session_id: id, cwd: r.root, transcript_path: join(r.home, "none.jsonl") };
  return {
    start: (source: string) => runHook(r, "session-start", { ...startTemplate, ...base, source }),
    end: (reason: string) => runHook(r, "session-end", { ...endTemplate, ...base, reason }),
  };
}

/** Commits as someone else: the committer identity git records for this one commit. */
function commitAs(r: TempRepo, who: { name: string; email: string }, message: string, files: Record<string, string>) {
  const before = { name: r.env.GIT_COMMITTER_NAME, email: r.env.GIT_COMMITTER_EMAIL };
  r.env.GIT_COMMITTER_NAME = who.name;
  r.env.GIT_COMMITTER_EMAIL = who.email;
  try {
    return agentCommit(r, message, files);
  } finally {
    r.env.GIT_COMMITTER_NAME = before.name!;
    r.env.GIT_COMMITTER_EMAIL = before.email!;
  }
}

const list = async (r: TempRepo, ...args: string[]) => runBin(["history", "list", ...args], { cwd: r.root, env: r.env });

describe("the person and the agent behind each entry", () => {
  test("author is the committer's identity, model comes from SessionStart; history list --author filters by either part", async () => {
    repo = tempRepo();
    expect(startTemplate.model).toBe("claude-opus-4-8[1m]");
    const alice = session(repo, "sess-alice");
    expect((await lifecycle(repo, "sess-alice").start("startup")).code).toBe(0);
    await alice.prompt("add the parser");
    const a = commitAs(repo, { name: "Alice Martin", email: "alice@example.com" }, "feat: parser", { "parser.ts": "p" });
    await alice.bash("git commit -m 'feat: parser'", a.stdout);

    const bob = session(repo, "sess-bob");
    await bob.prompt("fix the writer");
    const b = commitAs(repo, { name: "Bob Stone", email: "bob@corp.example" }, "fix: writer", { "writer.ts": "w" });
    await bob.bash("git commit -m 'fix: writer'", b.stdout);

    const ea = showEntry(repo, a.hash)!;
    expect(ea.author).toBe("Alice Martin <alice@example.com>");
    expect(ea.model).toBe("claude-opus-4-8[1m]");
    const eb = showEntry(repo, b.hash)!;
    expect(eb.author).toBe("Bob Stone <bob@corp.example>");
    // this session's SessionStart was not seen: no model is guessed
    expect(eb.model).toBeUndefined();
    expect(eb.continuedFrom).toBeUndefined();

    // completing the entry keeps who made it
    expect((await capture(repo, ["--commit-hash", a.hash, "--intent", "why"], { CLAUDE_SESSION_ID: "sess-alice" })).code).toBe(0);
    expect(showEntry(repo, a.hash)!.author).toBe("Alice Martin <alice@example.com>");

    // an entry `capture` creates itself (the hook did not see the commit) gets the same facts of the named session
    const manual = commitAs(repo, { name: "Alice Martin", email: "alice@example.com" }, "docs: parser", { "parser.md": "d" });
    expect((await capture(repo, ["--commit-hash", manual.hash, "--intent", "why"], { CLAUDE_SESSION_ID: "sess-alice" })).code).toBe(0);
    expect(showEntry(repo, manual.hash)).toMatchObject({ author: "Alice Martin <alice@example.com>", model: "claude-opus-4-8[1m]" });

    const hashes = async (...args: string[]) => JSON.parse((await list(repo!, "--json", ...args)).stdout).map((e: { commitHash: string }) => e.commitHash);
    expect((await hashes("--author", "alice")).sort()).toEqual([manual.hash, a.hash].sort());
    expect(await hashes("--author", "CORP.EXAMPLE")).toEqual([b.hash]);
    expect(await hashes("--author", "nobody")).toEqual([]);
    expect((await hashes()).sort()).toEqual([a.hash, b.hash, manual.hash].sort());

    const text = await list(repo, "--author", "Bob");
    expect(text.code).toBe(0);
    expect(text.stdout).toContain("Bob Stone");
    expect(text.stdout).not.toContain("Alice Martin");
    expect(text.stdout).toContain("fix: writer");

    const empty = await list(repo, "--author", "  ");
    expect(empty.code).not.toBe(0);
    expect(empty.stderr).toContain("--author");

    const show = await runBin(["history", "show", a.hash], { cwd: repo.root, env: repo.env });
    expect(show.stdout).toContain("Alice Martin <alice@example.com>");
    expect(show.stdout).toContain("claude-opus-4-8[1m]");
  });

  test("after /clear, the new session's entries name the session it continued, also after a resume", async () => {
    repo = tempRepo();
    const old = session(repo, "sess-before-clear");
    const oldLife = lifecycle(repo, "sess-before-clear");
    await oldLife.start("startup");
    await old.prompt("migrate the config loader");
    const c1 = agentCommit(repo, "feat: loader, part 1", { "loader.ts": "1" });
    await old.bash("git commit -m 'feat: loader, part 1'", c1.stdout);
    await old.stop("Part 1 done; part 2 next.");
    expect((await oldLife.end("clear")).code).toBe(0);

    const next = session(repo, "sess-after-clear");
    const nextLife = lifecycle(repo, "sess-after-clear");
    expect((await nextLife.start("clear")).code).toBe(0);
    await next.prompt("go on");
    const c2 = agentCommit(repo, "feat: loader, part 2", { "loader.ts": "2" });
    await next.bash("git commit -m 'feat: loader, part 2'", c2.stdout);
    expect(showEntry(repo, c2.hash)!.continuedFrom).toBe("sess-before-clear");
    expect(showEntry(repo, c1.hash)!.continuedFrom).toBeUndefined();

    // the session ends and is resumed (fresh live files): its later entries still say where it came from
    await nextLife.end("prompt_input_exit");
    await nextLife.start("resume");
    await next.prompt("and the tests");
    const c3 = agentCommit(repo, "test: loader", { "loader.test.ts": "t" });
    await next.bash("git commit -m 'test: loader'", c3.stdout);
    expect(showEntry(repo, c3.hash)!.continuedFrom).toBe("sess-before-clear");

    const show = await runBin(["history", "show", c2.hash], { cwd: repo.root, env: repo.env });
    expect(show.stdout).toContain("sess-before-clear");
  });

  test("Codex names its model in every payload: the commit's PostToolUse is enough; its Stop reminds the agent too", async () => {
    repo = tempRepo();
    const base = { session_id: "codex-sess-1", cwd: repo.root, transcript_path: null, model: "gpt-5.1-codex" };
    const hook = (event: string, payload: Record<string, unknown>) => runHook(repo!, event, { ...base, ...payload }, { agent: "codex" });
    await hook("user-prompt-submit", { hook_event_name: "UserPromptSubmit", prompt: "rename it" });
    const c = agentCommit(repo, "refactor: rename", { "r.ts": "r" });
    await hook("post-tool-use", {
      hook_event_name: "PostToolUse",
      tool_name: "Bash",
      tool_input: { command: ["bash", "-lc", "git commit -am 'refactor: rename'"] },
      tool_response: c.stdout,
    });
    const e = showEntry(repo, c.hash)!;
    expect(e.agentType).toBe("CODEX");
    expect(e.model).toBe("gpt-5.1-codex");
    expect(e.author).toBe("Test Committer <committer@example.com>");

    // Codex's Stop takes the same answer as Claude Code's: the agent is asked once, the user told once, no loop
    const stop = (active: boolean) => hook("stop", { hook_event_name: "Stop", turn_id: "t1", stop_hook_active: active, last_assistant_message: "renamed" });
    const asked = JSON.parse((await stop(false)).stdout);
    expect(asked.decision).toBe("block");
    expect(asked.reason).toContain(c.hash);
    const told = JSON.parse((await stop(true)).stdout);
    expect(told.decision).toBeUndefined();
    expect(told.systemMessage).toContain(c.hash);
    expect((await stop(true)).stdout).toBe("");
    expect((await stop(false)).stdout).toBe("");
  });
});
