/**
 * The capture queue: the commit hook and SessionEnd hand their storing to a detached worker. Work whose worker never
 * ran (killed, the machine stopped) is recovered by the next reader exactly as the hook would have stored it, and a
 * worker storing while the same session goes on loses nothing.
 */
import { afterEach, describe, expect, setDefaultTimeout, test } from "bun:test";
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { binary, captureQueueDir, captureSettled, queuedCaptureJobs, runBin, tempRepo, type TempRepo } from "../helpers.ts";
import { agentCommit, excludeLocalFiles, fsckClean, records, session, showEntry, storedTranscript } from "./capture-support.ts";

setDefaultTimeout(120_000);

let repo: TempRepo | undefined;
afterEach(() => {
  repo?.cleanup();
  repo = undefined;
});

/** Hooks that queue their work and start no worker: as if the worker was killed before it began. */
const NO_WORKER = { AIFLARE_NO_CAPTURE_WORKER: "1" };

const live = (r: TempRepo, id: string) => join(r.root, ".context-capture", `.claude-prompts-${id}`);

/**
 * A fresh repository (removed after the test) and a session of it whose hooks queue their work and start no worker.
 * The test's `repo` is this one.
 */
function queuedSession(id: string): { repo: TempRepo; s: ReturnType<typeof session> } {
  const r = tempRepo();
  repo = r;
  excludeLocalFiles(r);
  return { repo: r, s: session(r, id, NO_WORKER) };
}

/** git's stable patch id of a commit's change against its first parent. */
function gitPatchId(r: TempRepo, hash: string): string {
  const patch = Bun.spawnSync(["git", "diff-tree", "-p", "--root", "-m", "--first-parent", hash], { cwd: r.root, env: r.env }).stdout;
  const id = Bun.spawnSync(["git", "patch-id", "--stable"], { cwd: r.root, env: r.env, stdin: patch }).stdout.toString();
  expect(id).toMatch(/^[0-9a-f]{40} /);
  return id.split(" ")[0]!;
}

function reminderOf(out: { stdout: string }): string {
  return (JSON.parse(out.stdout) as { hookSpecificOutput: { additionalContext: string } }).hookSpecificOutput.additionalContext;
}

describe("queued capture work", () => {
  test("a commit whose worker never ran: the next reader writes exactly its entry and segment", async () => {
    const { repo, s } = queuedSession("sess-q");
    await s.prompt("add the parser");
    await s.stop("I will add it.");
    const c = agentCommit(repo, "feat: add the parser", { "p.ts": "export const p = 1;\n" });
    const before = new Date().toISOString();
    const out = await s.bash("git commit -m x", c.stdout);
    const after = new Date().toISOString();
    // the agent is told at once; the entry waits in the queue
    expect(reminderOf(out)).toContain(c.hash);
    expect(queuedCaptureJobs(repo.root)).toHaveLength(1);
    expect(showEntry(repo, c.hash)).toBeNull();
    // the delta is taken: the next commit would not get these lines again
    const state = JSON.parse(readFileSync(join(repo.root, ".context-capture", ".claude-offset-sess-q"), "utf8"));
    expect(state.pending).toEqual([c.hash]);
    expect(state.cut).toBeGreaterThan(0);
    // the agent commits again on its own in the same turn: queued behind the first, grouped with it
    const c2 = agentCommit(repo, "test: cover the parser", { "p.test.ts": "p\n" });
    expect(reminderOf(await s.bash("git commit -m y", c2.stdout))).toContain(c2.hash);
    expect(queuedCaptureJobs(repo.root)).toHaveLength(2);
    // the user switches branch before anything reads the timeline: the entry still says where the commit was made
    repo.git("checkout", "-q", "-b", "elsewhere");

    const list = await runBin(["history", "list", "--json"], { cwd: repo.root, env: repo.env });
    expect(list.code).toBe(0);
    expect(queuedCaptureJobs(repo.root)).toEqual([]);
    const entry = showEntry(repo, c.hash)!;
    expect((JSON.parse(list.stdout) as { commitHash: string }[]).map((e) => e.commitHash).sort()).toEqual([c.hash, c2.hash].sort());
    expect(records(entry.conversationSnippet)).toEqual([
      { role: "user", content: "add the parser" },
      { role: "assistant", content: "I will add it." },
    ]);
    expect(entry.branch).toBe("main");
    expect(entry.groupRootId).toBeNull();
    expect(entry.summaryStatus).toBe("pending");
    // the change's whole fingerprint before any capture: git's own patch id of the commit, for capture and the squash
    // matcher to find made
    expect(entry.fingerprint.patchId).toBe(gitPatchId(repo, c.hash));
    expect(entry.fingerprint.files.map((f: { path: string }) => f.path)).toEqual(["p.ts"]);
    const second = showEntry(repo, c2.hash)!;
    expect(second.groupRootId).toBe(c.hash);
    expect(second.conversationSnippet).toBe("");
    expect(second.branch).toBe("main");
    expect(entry.claudeSessionId).toBe("sess-q");
    // written when the hook ran, not when the reader came
    expect(entry.capturedAt >= before && entry.capturedAt <= after).toBe(true);
    expect(entry.recordedAt).toBe(entry.capturedAt);
    expect(records(storedTranscript(repo, "sess-q"))).toEqual([
      { role: "user", content: "add the parser" },
      { role: "assistant", content: "I will add it." },
    ]);
    expect(fsckClean(repo)).toBe(true);
  });

  test("a job whose worker was killed after the work but before removing the job adds nothing twice", async () => {
    const { repo, s } = queuedSession("sess-twice");
    await s.prompt("add the lexer");
    await s.stop("Adding it.");
    const c = agentCommit(repo, "feat: add the lexer", { "l.ts": "export const l = 1;\n" });
    await s.bash("git commit -m x", c.stdout);
    const [job] = queuedCaptureJobs(repo.root);
    const jobPath = join(captureQueueDir(repo.root)!, job!);
    const saved = readFileSync(jobPath, "utf8");
    expect((await runBin(["history", "list"], { cwd: repo.root, env: repo.env })).code).toBe(0);
    const entry = showEntry(repo, c.hash)!;
    const transcript = storedTranscript(repo, "sess-twice");
    const tips = repo.git("for-each-ref", "--format=%(objectname)", "refs/heads/aiflare/");
    // the job file back, as a worker killed between its last write and the removal leaves it
    writeFileSync(jobPath, saved);
    expect((await runBin(["history", "list"], { cwd: repo.root, env: repo.env })).code).toBe(0);
    expect(queuedCaptureJobs(repo.root)).toEqual([]);
    expect(showEntry(repo, c.hash)).toEqual(entry);
    expect(storedTranscript(repo, "sess-twice")).toBe(transcript);
    expect(repo.git("for-each-ref", "--format=%(objectname)", "refs/heads/aiflare/")).toBe(tips);
  });

  test("a session resumed and committing before its end was stored: the end leaves the live files to the later commit", async () => {
    const { repo, s } = queuedSession("sess-resume");
    await s.prompt("one");
    const c1 = agentCommit(repo, "feat: one", { "one.ts": "1\n" });
    await s.bash("git commit -m one", c1.stdout);
    await s.stop("reply one");
    await s.end();
    // resumed (same id) before any worker ran, and committing at once
    await s.start("resume");
    const c2 = agentCommit(repo, "feat: two", { "two.ts": "2\n" });
    await s.bash("git commit -m two", c2.stdout);
    expect(queuedCaptureJobs(repo.root)).toHaveLength(3);
    expect((await runBin(["history", "list"], { cwd: repo.root, env: repo.env })).code).toBe(0);
    expect(queuedCaptureJobs(repo.root)).toEqual([]);
    expect(records(showEntry(repo, c1.hash)!.conversationSnippet).map((l) => l.content)).toEqual(["one"]);
    expect(records(showEntry(repo, c2.hash)!.conversationSnippet).map((l) => l.content)).toEqual(["reply one"]);
    expect(records(storedTranscript(repo, "sess-resume")).map((l) => l.content)).toEqual(["one", "reply one"]);
    // the resumed session's state was not compacted away: its Stop still asks for the summary of the new commit
    const state = JSON.parse(readFileSync(join(repo.root, ".context-capture", ".claude-offset-sess-resume"), "utf8"));
    expect(state.pending).toContain(c2.hash);
    expect(fsckClean(repo)).toBe(true);
  });

  test("the agent's capture right after the commit finds the queued entry and completes it", async () => {
    const { repo, s } = queuedSession("sess-c");
    await s.prompt("add b");
    const c = agentCommit(repo, "feat: add b", { "b.ts": "export const b = 2;\n" });
    await s.bash("git commit -m x", c.stdout);
    const cap = await runBin(
      ["capture", "--commit-hash", c.hash, "--claude-session-id", "sess-c", "--title", "Add b", "--intent", "Problem: no b. Solution: add it.", "--tag", "FEATURE"],
      { cwd: repo.root, env: repo.env },
    );
    expect(cap.code).toBe(0);
    const entry = showEntry(repo, c.hash)!;
    expect(entry.title).toBe("Add b");
    expect(entry.summaryStatus).toBe("written");
    expect(records(entry.conversationSnippet)).toEqual([{ role: "user", content: "add b" }]);
    // the delta file holds the conversation cut at the commit, kept when the job was stored
    expect(records(readFileSync(join(repo.root, ".context-capture", ".claude-conversation-delta-sess-c"), "utf8"))).toEqual([{ role: "user", content: "add b" }]);
    // one entry, one version written by the hook's job and one by capture
    expect(repo.git("rev-list", "--count", "aiflare/timeline/v1")).toBe("2");
  });

  test("a session ended while its worker was killed: the next session-start's worker stores it", async () => {
    const { repo, s } = queuedSession("sess-e");
    await s.prompt("what does this repo do?");
    await s.stop("It parses things.");
    await s.end();
    expect(queuedCaptureJobs(repo.root)).toHaveLength(1);
    expect(existsSync(live(repo, "sess-e"))).toBe(true);
    // a worker killed while it held the queue left its lock: a dead holder's lock is taken over
    const dead = Bun.spawnSync(["true"]).pid;
    writeFileSync(join(captureQueueDir(repo.root)!, "drain.lock"), `${dead}\n`);
    // a new session starts; its hook starts the worker for what was left
    const next = await session(repo, "sess-next").start();
    expect(next.code).toBe(0);
    await captureSettled(repo.root);
    expect(queuedCaptureJobs(repo.root)).toEqual([]);
    expect(records(storedTranscript(repo, "sess-e"))).toEqual([
      { role: "user", content: "what does this repo do?" },
      { role: "assistant", content: "It parses things." },
    ]);
    // no entry took its lines: they stay live for a resumed session's next commit, marked as stored
    const state = JSON.parse(readFileSync(join(repo.root, ".context-capture", ".claude-offset-sess-e"), "utf8"));
    expect(state.stored).toBe(readFileSync(live(repo, "sess-e")).length);
    expect(fsckClean(repo)).toBe(true);
  });

  test("a worker storing and compacting while the resumed session appends loses no line", async () => {
    const id = "sess-race";
    const { repo, s } = queuedSession(id);
    await s.prompt("first");
    const c = agentCommit(repo, "feat: the change", { "c.ts": "export const c = 3;\n" });
    await s.bash("git commit -m x", c.stdout);
    // a long conversation after the commit, which the end keeps live (no entry took it): storing it and rewriting
    // the live log take the worker a while
    const old: string[] = [];
    const lines: string[] = [];
    for (let i = 0; i < 12_000; i++) {
      const content = `later line ${i} ${"x".repeat(300)}`;
      old.push(content);
      lines.push(JSON.stringify({ role: i % 2 ? "assistant" : "user", content, at: new Date().toISOString() }));
    }
    writeFileSync(live(repo, id), `${lines.join("\n")}\n`, { flag: "a" });
    await s.end();
    expect(queuedCaptureJobs(repo.root)).toHaveLength(2);
    // the worker stores and compacts while the same session, resumed, keeps recording prompts until it is done
    const worker = Bun.spawn([binary(), "__capture-worker", join(repo.root, ".git")], { cwd: repo.root, env: repo.env, stdout: "ignore", stderr: "ignore" });
    let running = true;
    void worker.exited.then(() => (running = false));
    const resumed = session(repo, id, NO_WORKER);
    const later: string[] = [];
    while (running || later.length < 4) {
      const batch = [`resumed prompt ${later.length}`, `resumed prompt ${later.length + 1}`];
      later.push(...batch);
      await Promise.all(batch.map((p) => resumed.prompt(p)));
    }
    expect(await worker.exited).toBe(0);
    // the resumed session ends; a reader finishes its work
    await resumed.end();
    expect((await runBin(["history", "list"], { cwd: repo.root, env: repo.env })).code).toBe(0);
    expect(queuedCaptureJobs(repo.root)).toEqual([]);
    expect(records(showEntry(repo, c.hash)!.conversationSnippet).map((l) => l.content)).toEqual(["first"]);
    const stored = records(storedTranscript(repo, id)).map((l) => l.content);
    // every line exactly once: the first part in its order, the resumed prompts all there
    expect(stored.slice(0, old.length + 1)).toEqual(["first", ...old]);
    expect(stored.slice(old.length + 1).sort()).toEqual([...later].sort());
    // what no entry took yet stays live for the resumed session's next commit, and nothing else
    expect(records(readFileSync(live(repo, id), "utf8")).map((l) => l.content).sort()).toEqual([...old, ...later].sort());
    expect(fsckClean(repo)).toBe(true);
  });

  test("the worker a hook starts runs below the agent's priority, and stores the commit", async () => {
    const r = tempRepo();
    repo = r;
    excludeLocalFiles(r);
    const s = session(r, "sess-nice");
    await s.prompt("add n");
    // another worker holds the queue: the one this hook starts waits for it, long enough to be looked at
    const holder = Bun.spawn(["sleep", "60"]);
    const queue = captureQueueDir(r.root)!;
    mkdirSync(queue, { recursive: true, mode: 0o700 });
    writeFileSync(join(queue, "drain.lock"), `${holder.pid}\n`);
    const c = agentCommit(r, "feat: add n", { "n.ts": "export const n = 1;\n" });
    // the hook returns at once; what it runs with waits for its worker, which waits for the holder
    const hooked = s.bash("git commit -m x", c.stdout);
    const commonDir = join(r.root, ".git");
    let worker: number | undefined;
    for (let i = 0; i < 200 && worker === undefined; i++) {
      for (const pid of readdirSync("/proc").filter((n) => /^\d+$/.test(n))) {
        let cmd = "";
        try {
          cmd = readFileSync(`/proc/${pid}/cmdline`, "utf8");
        } catch {
          continue;
        }
        if (cmd.split("\0").includes("__capture-worker") && cmd.includes(commonDir)) worker = Number(pid);
      }
      if (worker === undefined) await Bun.sleep(25);
    }
    expect(worker).toBeDefined();
    // field 19 of /proc/<pid>/stat, counted after the command's closing parenthesis
    const nice = (pid: number | "self") => Number(readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ")[16]);
    // it lowers its priority first thing after it starts
    for (let i = 0; i < 200 && nice(worker!) === nice("self"); i++) await Bun.sleep(25);
    expect(nice(worker!)).toBe(nice("self") + 10);
    holder.kill();
    await holder.exited;
    expect((await hooked).code).toBe(0);
    expect(showEntry(r, c.hash)?.commitHash).toBe(c.hash);
  });
});
