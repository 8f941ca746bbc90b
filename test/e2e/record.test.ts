/**
 * A true record (SPEC §5–§6, §8): real Claude Code sessions replayed through the compiled binary's hooks against
 * real git, checking that no conversation is lost on resume or failure, every agent commit is captured and none
 * is misattributed.
 */
import { afterEach, describe, expect, setDefaultTimeout, test } from "bun:test";
import { existsSync, mkdirSync, readFileSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { FIXTURES, queuedCaptureJobs, runBin, runHook, tempRepo, type RunResult, type TempRepo, untimed } from "../helpers.ts";
import { parseJsonl } from "../../src/util/jsonl.ts";
import { redactForWrite } from "../../src/redact/index.ts";
import { agentCommit, capture, fsckClean, records, session, showEntry, startTemplate, stopTemplate, storedTranscript } from "./capture-support.ts";

setDefaultTimeout(60_000);

let repo: TempRepo | undefined;
afterEach(() => {
  repo?.cleanup();
  repo = undefined;
});

const LOGS = join(FIXTURES, "CoorpAcademy__serverless-plugins", "logs");
const postToolUse = JSON.parse(readFileSync(join(LOGS, "abc7156b-6420-4373-a150-9b2eecad6805/post_tool_use.json"), "utf8")) as Record<string, unknown>[];
const bashTemplate = postToolUse.find((p) => p.tool_name === "Bash")!;

/** A session driver with the events the base helper lacks: resume, tool failures, the call's duration. */
function agent(r: TempRepo, id: string) {
  const s = session(r, id);
  const base = { session_id: id, cwd: r.root, transcript_path: join(r.home, "none.jsonl") };
  const shell = (event: string, command: string, opts: { stdout?: string; error?: string; durationMs?: number } = {}) =>
    runHook(r, event, {
      ...bashTemplate,
      ...base,
      hook_event_name: event === "post-tool-use" ? "PostToolUse" : "PostToolUseFailure",
      tool_input: { command, description: "run" },
      tool_response: { stdout: opts.stdout ?? "", stderr: "", interrupted: false, isImage: false, noOutputExpected: false },
      ...(opts.error !== undefined ? { error: opts.error } : {}),
      duration_ms: opts.durationMs ?? 1500,
    });
  return {
    ...s,
    /** the Stop that ends a turn the Stop hook continued */
    stopAgain: (message: string) => runHook(r, "stop", { ...stopTemplate, ...base, stop_hook_active: true, last_assistant_message: message }),
    start: (source: string) => runHook(r, "session-start", { ...startTemplate, ...base, source }),
    shell: (command: string, opts: { stdout?: string; durationMs?: number } = {}) => shell("post-tool-use", command, opts),
    failed: (command: string, opts: { stdout?: string; error: string; durationMs?: number }) => shell("post-tool-use-failure", command, opts),
  };
}

/** The additionalContext of a hook's output, or "" when it printed nothing. */
function context(out: RunResult): string {
  expect(out.code).toBe(0);
  return out.stdout ? (JSON.parse(out.stdout).hookSpecificOutput?.additionalContext ?? "") : "";
}

const live = (r: TempRepo, id: string) => join(r.root, ".context-capture", `.claude-prompts-${id}`);

type Event = { kind: "prompt" | "reply"; text: string } | { kind: "resume" };

/** The user prompts, final replies and resumes of a real Claude Code transcript, in order. */
function conversationOf(path: string): Event[] {
  const out: Event[] = [];
  let reply: string | undefined;
  const flush = () => {
    if (reply !== undefined) out.push({ kind: "reply", text: reply });
    reply = undefined;
  };
  for (const rec of parseJsonl(readFileSync(path, "utf8")) as Record<string, any>[]) {
    const content = rec.message?.content;
    if (rec.type === "user" && typeof content === "string" && !rec.isMeta) {
      flush();
      out.push({ kind: "prompt", text: content });
    } else if (rec.type === "assistant" && Array.isArray(content)) {
      const text = content.filter((b: any) => b?.type === "text").map((b: any) => b.text).join("\n");
      if (text.trim()) reply = text;
    } else if (rec.type === "progress" && rec.data?.hookName === "SessionStart:resume") {
      flush();
      if (out.at(-1)?.kind !== "resume") out.push({ kind: "resume" });
    }
  }
  flush();
  return out;
}

describe("conversation continuity", () => {
  test("1. a resumed session (same id) keeps one transcript in order; deltas partition it; grouping and the first request survive", async () => {
    repo = tempRepo();
    const events = conversationOf(join(FIXTURES, "entireio__cli/37/995ebed6e4/2/full.jsonl"));
    expect(events.filter((e) => e.kind === "resume")).toHaveLength(1);
    const prompts = events.filter((e) => e.kind === "prompt") as { text: string }[];
    expect(prompts.length).toBeGreaterThanOrEqual(4);
    const S = "130d7b7e-5801-4345-9bd6-f32fd9b8429b";
    const a = agent(repo, S);
    await a.start("startup");
    const commits: string[] = [];
    const commit = async (name: string) => {
      const c = agentCommit(repo!, `feat: ${name}`, { [`${name}.txt`]: name });
      expect(context(await a.shell(`git commit -m "feat: ${name}"`, { stdout: c.stdout }))).toContain(c.hash);
      commits.push(c.hash);
    };
    const resume = async () => {
      expect((await a.end()).code).toBe(0);
      expect((await a.start("resume")).code).toBe(0);
    };
    let promptNo = 0;
    for (const e of events) {
      if (e.kind === "prompt") {
        await a.prompt(e.text);
        promptNo++;
        if (promptNo === 1) await commit("one");
        if (promptNo === 3) await commit("three");
      } else if (e.kind === "reply") {
        await a.stop(e.text);
        // an extra exit and resume right after the first turn: the agent then commits before anyone types
        if (promptNo === 1) {
          await resume();
          await commit("two");
        }
      } else {
        await resume();
      }
    }
    expect((await a.end()).code).toBe(0);

    // the stored transcript is the whole conversation, in order, across both resumes
    const expected = events.flatMap((e) => (e.kind === "resume" ? [] : [{ role: e.kind === "prompt" ? "user" : "assistant", content: e.text }]));
    const stored = records(storedTranscript(repo, S));
    expect(stored).toEqual(expected);

    // the deltas, in commit order, then what no commit took yet, are exactly that transcript
    const [e1, e2, e3] = commits.map((h) => showEntry(repo!, h)!);
    const taken = [e1!, e2!, e3!].flatMap((e) => records(e.conversationSnippet));
    const rest = records(readFileSync(live(repo, S), "utf8"));
    expect([...taken, ...rest].map((l) => l.role)).toEqual(stored.map((l) => l.role));
    expect(taken).toEqual(stored.slice(0, taken.length));
    // the reply given before the exit went to the commit after the resume
    expect(records(e2!.conversationSnippet).map((l) => l.role)).toEqual(["assistant"]);
    // grouping continued across the resume: the agent's own commit joined the first request's group
    expect(e2!.groupRootId).toBe(commits[0]);
    expect(e3!.groupRootId).toBeNull();
    // history heads the session with its first request, not a resumed one
    const list = await runBin(["history", "list"], { cwd: repo.root, env: repo.env });
    expect(list.stdout).toContain(prompts[0]!.text.slice(0, 30));
    expect(fsckClean(repo)).toBe(true);
  });

  test("1b. every real transcript of the fixtures, replayed with commits and resumes: stored whole, deltas partition it", async () => {
    repo = tempRepo();
    const root = join(FIXTURES, "entireio__cli");
    const paths = [...new Bun.Glob("*/*/*/full.jsonl").scanSync(root)].sort();
    expect(paths.length).toBeGreaterThanOrEqual(10);
    const sessions: { id: string; expected: { role: string; content: string }[]; commits: string[] }[] = [];
    for (const [n, rel] of paths.entries()) {
      const id = `replay-${n}`;
      const a = agent(repo, id);
      const commits: string[] = [];
      let prompt = 0;
      const events = conversationOf(join(root, rel));
      for (const e of events) {
        if (e.kind === "prompt") {
          await a.prompt(e.text);
          if (prompt++ % 2 === 0) {
            const c = agentCommit(repo, `feat: ${id} ${prompt}`, { [`${id}-${prompt}.txt`]: "x" });
            expect(context(await a.shell("git commit -m x", { stdout: c.stdout }))).toContain(c.hash);
            commits.push(c.hash);
          }
        } else if (e.kind === "reply") {
          await a.stop(e.text);
        } else {
          await a.end();
          await a.start("resume");
        }
      }
      await a.end();
      const raw = events.flatMap((e) => (e.kind === "resume" ? [] : [{ role: e.kind === "prompt" ? "user" : "assistant", content: e.text }]));
      // stored as written: redacted (home directories and the like), line by line
      const expected = records(redactForWrite(raw.map((l) => `${JSON.stringify(l)}\n`).join(""), { jsonl: true }));
      sessions.push({ id, expected, commits });
    }
    for (const { id, expected, commits } of sessions) {
      const stored = records(storedTranscript(repo, id));
      expect({ id, stored }).toEqual({ id, stored: expected });
      const taken = commits.flatMap((h) => records(showEntry(repo!, h)!.conversationSnippet));
      const rest = existsSync(live(repo, id)) ? records(redactForWrite(readFileSync(live(repo, id), "utf8"), { jsonl: true })) : [];
      expect({ id, parts: [...taken, ...rest] }).toEqual({ id, parts: stored });
    }
    expect(fsckClean(repo)).toBe(true);
  });

  test("2. session-end keeps the live files when storing fails, and a later session-end stores everything", async () => {
    repo = tempRepo();
    const a = agent(repo, "sess-fail");
    await a.prompt("first request");
    await a.stop("first reply");
    // storing cannot succeed: something occupies the place of the sessions branch's directory
    const blocker = join(repo.root, ".git", "refs", "heads", "aiflare", "sessions");
    mkdirSync(join(blocker, ".."), { recursive: true });
    writeFileSync(blocker, "not a directory\n");
    // a commit meanwhile still gets its entry; only the transcript waits
    const c = agentCommit(repo, "feat: during the outage", { "o.txt": "o" });
    expect(context(await a.shell("git commit -m x", { stdout: c.stdout }))).toContain(c.hash);
    expect(records(showEntry(repo, c.hash)!.conversationSnippet).map((l) => l.content)).toEqual(["first request", "first reply"]);
    await a.stop("second reply");
    const end = await a.end();
    expect(end.code).toBe(0);
    expect(records(readFileSync(live(repo, "sess-fail"), "utf8")).map((l) => l.content)).toEqual(["first request", "first reply", "second reply"]);
    // the capture worker the hook started tried, logged the failure and left the work queued for a later try
    expect(readFileSync(join(repo.root, ".context-capture", "aiflare.log"), "utf8")).toContain("capture worker: queued capture work failed");
    expect(queuedCaptureJobs(repo.root)).toHaveLength(1);
    // the disk is fine again: the resumed session ends and everything is there
    rmSync(blocker);
    await a.start("resume");
    await a.prompt("second request");
    await a.end();
    expect(records(storedTranscript(repo, "sess-fail")).map((l) => l.content)).toEqual(["first request", "first reply", "second reply", "second request"]);
  });

  test("2b. a session that never ended (Codex, a crash) is stored before its stale live files are cleared", async () => {
    repo = tempRepo();
    const base = { cwd: repo.root, transcript_path: null, hook_event_name: "UserPromptSubmit", model: "gpt-5" };
    await runHook(repo, "user-prompt-submit", { ...base, session_id: "codex-old", prompt: "old request", turn_id: "t1" }, { agent: "codex" });
    const old = join(repo.root, ".context-capture", ".codex-prompts-codex-old");
    const weekAgo = new Date(Date.now() - 8 * 24 * 3600 * 1000);
    utimesSync(old, weekAgo, weekAgo);
    const start = await runHook(repo, "session-start", { ...base, hook_event_name: "SessionStart", session_id: "codex-new", source: "startup" }, { agent: "codex" });
    expect(start.code).toBe(0);
    expect(existsSync(old)).toBe(false);
    expect(records(storedTranscript(repo, "codex-old")).map((l) => l.content)).toEqual(["old request"]);
  });

  test("3. an append cut short (torn line) never glues onto the next prompt", async () => {
    repo = tempRepo();
    const a = agent(repo, "sess-torn");
    await a.prompt("one");
    // a full disk stopped this append half-way
    writeFileSync(live(repo, "sess-torn"), `${readFileSync(live(repo, "sess-torn"), "utf8")}{"role":"assistant","content":"half a rep`);
    await a.prompt("two");
    const lines = readFileSync(live(repo, "sess-torn"), "utf8").split("\n");
    expect(untimed([JSON.parse(lines.at(-2)!) as object])).toEqual([{ role: "user", content: "two" }]);
    const c = agentCommit(repo, "feat: x", { "x.txt": "x" });
    expect(context(await a.shell("git commit -m x", { stdout: c.stdout }))).toContain(c.hash);
    const snippet = showEntry(repo, c.hash)!.conversationSnippet as string;
    for (const l of snippet.split("\n").filter(Boolean)) expect(() => JSON.parse(l)).not.toThrow();
    expect(records(snippet).map((l) => l.content)).toEqual(["one", "two"]);
    expect(records(storedTranscript(repo, "sess-torn")).map((l) => l.content)).toEqual(["one", "two"]);
  });
});

describe("every agent commit, and only the agent's", () => {
  test("4. a rejected `git commit -q` never takes the user's own recent commit", async () => {
    repo = tempRepo();
    const a = agent(repo, "sess-rej");
    await a.prompt("commit the fix");
    // the user commits in their terminal a minute before the agent's call
    const past = new Date(Date.now() - 60_000).toISOString();
    writeFileSync(join(repo.root, "user.txt"), "mine\n");
    repo.git("add", "user.txt");
    const r = Bun.spawnSync(["git", "commit", "-q", "-m", "user's own work"], {
      cwd: repo.root,
      env: { ...repo.env, GIT_COMMITTER_DATE: past, GIT_AUTHOR_DATE: past },
    });
    expect(r.exitCode).toBe(0);
    const userCommit = repo.git("rev-parse", "HEAD");
    // the agent's commit is rejected by a pre-commit hook and prints no `[branch sha]` line
    writeFileSync(join(repo.root, ".git", "hooks", "pre-commit"), "#!/bin/sh\necho 'lint failed' >&2\nexit 1\n", { mode: 0o755 });
    writeFileSync(join(repo.root, "agent.txt"), "agent\n");
    repo.git("add", "agent.txt");
    expect(repo.tryGit("commit", "-q", "-m", "agent fix").code).not.toBe(0);
    // the command as a whole succeeds (PostToolUse), and so does it when it fails (PostToolUseFailure)
    expect((await a.shell("git commit -q -m 'agent fix'; git status --short", { stdout: "A  agent.txt\n", durationMs: 900 })).stdout).toBe("");
    expect((await a.failed("git commit -q -m 'agent fix'", { error: "lint failed", durationMs: 900 })).stdout).toBe("");
    // Codex reports no duration: the call came after the session's last prompt, so older commits are not its own
    const codex = { session_id: "codex-rej", cwd: repo.root, transcript_path: null, model: "gpt-5" };
    await runHook(repo, "user-prompt-submit", { ...codex, hook_event_name: "UserPromptSubmit", prompt: "commit it", turn_id: "t" }, { agent: "codex" });
    const cx = await runHook(
      repo,
      "post-tool-use",
      { ...codex, hook_event_name: "PostToolUse", tool_name: "shell", tool_input: { command: ["bash", "-lc", "git commit -q -m fix; true"] }, tool_response: "" },
      { agent: "codex" },
    );
    expect(cx.code).toBe(0);
    expect(cx.stdout).toBe("");
    expect(showEntry(repo, userCommit)).toBeNull();
  });

  test("5. `git commit && npm test` that fails afterwards (PostToolUseFailure) is captured", async () => {
    repo = tempRepo();
    const a = agent(repo, "sess-fail-after");
    await a.prompt("commit and test");
    const c = agentCommit(repo, "feat: tested later", { "t.txt": "t" });
    const out = await a.failed(`git add -A && git commit -m "feat: tested later" && npm test`, {
      stdout: c.stdout,
      error: "Exit code 1\nnpm ERR! Test failed.",
    });
    expect(JSON.parse(out.stdout).hookSpecificOutput.hookEventName).toBe("PostToolUseFailure");
    expect(context(out)).toContain(c.hash);
    expect(showEntry(repo, c.hash)!.summaryStatus).toBe("pending");
    // installed: the event has its hook
    const inst = await runBin(["install"], { cwd: repo.root, env: repo.env });
    expect(inst.code).toBe(0);
    const settings = JSON.parse(readFileSync(join(repo.root, ".claude", "settings.local.json"), "utf8"));
    expect(JSON.stringify(settings.hooks.PostToolUseFailure)).toContain("hook post-tool-use-failure");
  });

  test("6. every commit form SPEC §6 names passes the installed filter and is captured", async () => {
    repo = tempRepo();
    expect((await runBin(["install"], { cwd: repo.root, env: repo.env })).code).toBe(0);
    const settings = JSON.parse(readFileSync(join(repo.root, ".claude", "settings.local.json"), "utf8"));
    const bash = settings.hooks.PostToolUse.find((g: { matcher: string }) => g.matcher === "Bash");
    const rule = /^Bash\((.*) \*\)$/.exec(bash.hooks[0].if)?.[1];
    expect(rule).toBeDefined();
    // Claude Code matches the rule's prefix against each subcommand, leading assignments dropped (2.1.89+)
    const delivered = (command: string) =>
      command
        .split(/&&|\|\||;|\|/)
        .map((c) => c.trim().replace(/^(?:[A-Za-z_][A-Za-z0-9_]*=\S*\s+)+/, ""))
        .some((c) => c === rule || c.startsWith(`${rule} `));
    mkdirSync(join(repo.root, "sub"), { recursive: true });
    const a = agent(repo, "sess-forms");
    const forms: [string, (msg: string) => string][] = [
      ["git -C dir commit", (m) => `git -C sub commit -m "${m}"`],
      ["cd x && git commit", (m) => `cd sub && git commit -m "${m}"`],
      ["FOO=1 git commit", (m) => `FOO=1 git commit -m "${m}"`],
      ["git add && git commit", (m) => `git add . && git commit -m "${m}"`],
    ];
    for (const [name, form] of forms) {
      const command = form(name);
      expect({ name, delivered: delivered(command) }).toEqual({ name, delivered: true });
      const c = agentCommit(repo, name, { [`sub/${name.replace(/\W+/g, "-")}.txt`]: name });
      expect(context(await a.shell(command, { stdout: c.stdout }))).toContain(c.hash);
    }
    expect(delivered("git merge --no-ff topic")).toBe(true);
    expect(delivered("git commit --amend --no-edit")).toBe(true);
  });

  test("6b. a commit that made nothing is told at once; the next commit, here or in a repository the line goes into, is still taken", async () => {
    repo = tempRepo();
    const a = agent(repo, "sess-nothing");
    await a.prompt("commit the notes");
    const first = agentCommit(repo, "docs: notes", { "notes.txt": "n\n" });
    expect(context(await a.shell('git add -A && git commit -m "docs: notes"', { stdout: first.stdout }))).toContain(first.hash);
    const state = () => readFileSync(join(repo!.root, ".context-capture", ".claude-offset-sess-nothing"), "utf8");
    const before = state();
    // nothing to commit: no word to the agent, the session's state as it was
    expect(context(await a.failed('git commit -m "docs: again"', { error: "nothing to commit, working tree clean" }))).toBe("");
    expect(context(await a.shell('git commit -m "docs: again"'))).toBe("");
    expect(state()).toBe(before);
    // a repository of its own inside this one: the line's `cd` takes its git there, and its commit is taken
    const inner = join(repo.root, "inner");
    mkdirSync(inner);
    const git = (...args: string[]) => Bun.spawnSync(["git", ...args], { cwd: inner, env: repo!.env, stderr: "pipe" });
    expect(git("init", "-q").exitCode).toBe(0);
    writeFileSync(join(inner, "i.txt"), "i\n");
    expect(git("add", "-A").exitCode).toBe(0);
    expect(git("commit", "-q", "-m", "feat: inner").exitCode).toBe(0);
    const innerHash = git("rev-parse", "HEAD").stdout.toString().trim();
    expect(context(await a.shell('cd inner && git commit -m "feat: inner"'))).toContain(innerHash);
    // and a commit here after the commit that made nothing
    const second = agentCommit(repo, "docs: more notes", { "more.txt": "m\n" });
    expect(context(await a.shell('git commit -am "docs: more notes"', { stdout: second.stdout }))).toContain(second.hash);
  });

  test("7. merge, cherry-pick and revert made by the agent get entries; a merge lists what it merged", async () => {
    repo = tempRepo();
    const a = agent(repo, "sess-merge");
    await a.prompt("merge the topic branch");
    repo.git("switch", "-q", "-c", "topic");
    repo.commit("topic one", { "t1.txt": "1\n" });
    repo.commit("topic two", { "t2.txt": "2\n" });
    repo.git("switch", "-q", "main");
    repo.commit("main work", { "m.txt": "m\n" });
    expect(repo.tryGit("merge", "--no-ff", "-q", "-m", "Merge topic", "topic").code).toBe(0);
    const merge = repo.git("rev-parse", "HEAD");
    expect(context(await a.shell("git merge --no-ff -q -m 'Merge topic' topic"))).toContain(merge);
    const m = showEntry(repo, merge)!;
    expect(m.changedFiles).toEqual(["t1.txt", "t2.txt"]);
    expect(m.diffSummary).toContain("Merge of 2 commits");
    expect(m.diffSummary).toContain("topic one");
    expect(m.diffSummary).toContain("topic two");

    repo.git("switch", "-q", "-c", "other", "HEAD~1");
    const picked = repo.commit("fix to pick", { "p.txt": "p\n" });
    repo.git("switch", "-q", "main");
    expect(repo.tryGit("cherry-pick", picked).code).toBe(0);
    const pick = repo.git("rev-parse", "HEAD");
    expect(context(await a.shell(`git cherry-pick ${picked}`))).toContain(pick);
    expect(repo.tryGit("revert", "--no-edit", "HEAD").code).toBe(0);
    const revert = repo.git("rev-parse", "HEAD");
    expect(context(await a.shell("git revert --no-edit HEAD"))).toContain(revert);
    expect(showEntry(repo, revert)!.title).toStartWith("Revert");
    // a fast-forward makes no commit, so no entry
    repo.git("switch", "-q", "-c", "ff", "HEAD~1");
    repo.git("switch", "-q", "main");
    expect(context(await a.shell("git merge ff"))).toBe("");
  });

  test("8. a command with thousands of `git commit`s is bounded and says what it skipped", async () => {
    repo = tempRepo();
    const a = agent(repo, "sess-many");
    await a.prompt("go");
    const c = agentCommit(repo, "feat: one real", { "one.txt": "1" });
    const command = Array.from({ length: 20_000 }, (_, i) => `git commit -q --allow-empty -m c${i}`).join(" && ");
    expect(context(await a.shell(command, { stdout: c.stdout }))).toContain(c.hash);
    expect(readFileSync(join(repo.root, ".context-capture", "aiflare.log"), "utf8")).toContain("long command");
  });
});

describe("capture writes to the right entry, with the right facts", () => {
  test("9. capture refuses another session's entry and defaults to the session's own waiting commit", async () => {
    repo = tempRepo();
    const s2 = agent(repo, "sess-two");
    const s3 = agent(repo, "sess-three");
    await s2.prompt("S2 request");
    const c2 = agentCommit(repo, "feat: S2 work", { "s2.txt": "2" });
    expect(context(await s2.shell("git commit -m 'feat: S2 work'", { stdout: c2.stdout }))).toContain(c2.hash);
    await s3.prompt("S3 request");
    const c3 = agentCommit(repo, "feat: S3 work", { "s3.txt": "3" });
    expect(context(await s3.shell("git commit -m 'feat: S3 work'", { stdout: c3.stdout }))).toContain(c3.hash);

    const wrong = await capture(repo, ["--commit-hash", repo.git("rev-parse", "HEAD"), "--title", "S2 title"], { CLAUDE_SESSION_ID: "sess-two" });
    expect(wrong.code).toBe(1);
    expect(wrong.stderr).toContain("another session");
    expect(wrong.stderr).toContain(c2.hash);
    expect(showEntry(repo, c3.hash)!.title).toBe("feat: S3 work");
    // without --commit-hash: the session's newest commit still waiting, not HEAD
    const right = await capture(repo, ["--title", "S2 title", "--intent", "why"], { CLAUDE_SESSION_ID: "sess-two" });
    expect(right.code).toBe(0);
    expect(showEntry(repo, c2.hash)).toMatchObject({ title: "S2 title", summaryStatus: "written" });
    expect(showEntry(repo, c3.hash)).toMatchObject({ title: "feat: S3 work", summaryStatus: "pending" });
  });

  test("10. a manual capture with no session borrows no conversation", async () => {
    repo = tempRepo();
    const a = agent(repo, "sess-busy");
    await a.prompt("an agent's request in another terminal");
    const c1 = agentCommit(repo, "feat: agent", { "a.txt": "a" });
    await a.shell("git commit -m 'feat: agent'", { stdout: c1.stdout });
    await a.prompt("more talk, not yet committed");
    const mine = repo.commit("docs: mine");
    const r = await capture(repo, ["--commit-hash", mine, "--intent", "by hand"]);
    expect(r.code).toBe(0);
    expect(showEntry(repo, mine)!.conversationSnippet).toBe("");
    // the agent's next commit still gets its own conversation
    const c2 = agentCommit(repo, "feat: agent two", { "b.txt": "b" });
    await a.shell("git commit -m 'feat: agent two'", { stdout: c2.stdout });
    expect(records(showEntry(repo, c2.hash)!.conversationSnippet).map((l) => l.content)).toEqual(["more talk, not yet committed"]);
  });

  test("11. --changed-files is normalised to the root, unquoted, and checked against the commit", async () => {
    repo = tempRepo();
    const c = repo.commit("feat: files", { "src/my dir/a \"b\".js": "x\n", "src/c.js": "c\n" });
    const sub = join(repo.root, "src");
    const quoted = '"src/my dir/a \\"b\\".js"';
    const ok = await capture(repo, ["--commit-hash", c, "--changed-files", `${quoted}, c.js`], {}, sub);
    expect(ok.code).toBe(0);
    expect(showEntry(repo, c)!.changedFiles).toEqual(['src/my dir/a "b".js', "src/c.js"]);
    const bad = await capture(repo, ["--commit-hash", c, "--changed-files", "src/nope.js"]);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain("src/nope.js");
    expect(bad.stderr).toContain("src/c.js");
  });

  test("12. a squash of three entries keeps every part's why and the union of files and conversations", async () => {
    repo = tempRepo();
    expect((await runBin(["install"], { cwd: repo.root, env: repo.env })).code).toBe(0);
    const a = agent(repo, "sess-squash");
    const hashes: string[] = [];
    for (const n of ["one", "two", "three"]) {
      await a.prompt(`request ${n}`);
      const c = agentCommit(repo, `feat: ${n}`, { [`${n}.txt`]: n });
      await a.shell(`git commit -m 'feat: ${n}'`, { stdout: c.stdout });
      expect((await capture(repo, ["--commit-hash", c.hash, "--title", `Title ${n}`, "--intent", `Why ${n}`, "--diff-summary", `${n}.txt: added`], { CLAUDE_SESSION_ID: "sess-squash" })).code).toBe(0);
      hashes.push(c.hash);
    }
    const base = repo.git("rev-parse", `${hashes[0]}~1`);
    const r = Bun.spawnSync(["git", "rebase", "-i", base], {
      cwd: repo.root,
      env: { ...repo.env, GIT_SEQUENCE_EDITOR: "sed -i -e '2,3s/^pick/squash/'", GIT_EDITOR: "true" },
    });
    expect(r.exitCode).toBe(0);
    const squashed = repo.git("rev-parse", "HEAD");
    const e = showEntry(repo, squashed)!;
    for (const n of ["one", "two", "three"]) {
      expect(e.intent).toContain(`### Title ${n}`);
      expect(e.intent).toContain(`Why ${n}`);
      expect(e.diffSummary).toContain(`${n}.txt: added`);
      expect(e.changedFiles).toContain(`${n}.txt`);
      expect(e.conversationSnippet).toContain(`request ${n}`);
    }
  });

  test("13. a new request followed by a question and its answer starts a new group; example B still continues", async () => {
    repo = tempRepo();
    const a = agent(repo, "sess-q");
    await a.prompt("request one");
    const c1 = agentCommit(repo, "feat: one", { "1.txt": "1" });
    await a.shell("git commit -m 'feat: one'", { stdout: c1.stdout });
    // example B: the agent asks, the user answers, the agent commits: same group
    await a.ask();
    const c2 = agentCommit(repo, "feat: one, part 2", { "2.txt": "2" });
    await a.shell("git commit -m 'feat: one, part 2'", { stdout: c2.stdout });
    expect(showEntry(repo, c2.hash)!.groupRootId).toBe(c1.hash);
    // a new request typed before the question: a new root, though a question was answered after it
    await a.prompt("request two, a different thing");
    await a.ask();
    const c3 = agentCommit(repo, "feat: two", { "3.txt": "3" });
    await a.shell("git commit -m 'feat: two'", { stdout: c3.stdout });
    const e3 = showEntry(repo, c3.hash)!;
    expect(e3.groupRootId).toBeNull();
    expect(e3.continuation).toBe(true);
    // an answer typed as a prompt after the question continues the group
    await a.ask();
    await a.prompt("yes, the second option");
    const c4 = agentCommit(repo, "feat: two, refined", { "4.txt": "4" });
    await a.shell("git commit -m 'feat: two, refined'", { stdout: c4.stdout });
    expect(showEntry(repo, c4.hash)!.groupRootId).toBe(c3.hash);
  });

  test("14. capture refuses commits of aiflare's own branches", async () => {
    repo = tempRepo();
    const c = repo.commit("feat: x");
    expect((await capture(repo, ["--commit-hash", c])).code).toBe(0);
    const tip = repo.git("rev-parse", "aiflare/timeline/v1");
    const r = await capture(repo, ["--commit-hash", tip, "--title", "oops"]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("aiflare's own");
    expect(showEntry(repo, tip)).toBeNull();
  });

  test("15. history orders and dates entries by the commit; a later capture does not move an entry", async () => {
    repo = tempRepo();
    const old = new Date(Date.UTC(2026, 0, 10, 9, 0)).toISOString();
    writeFileSync(join(repo.root, "old.txt"), "old\n");
    repo.git("add", "old.txt");
    Bun.spawnSync(["git", "commit", "-q", "-m", "feat: older"], { cwd: repo.root, env: { ...repo.env, GIT_COMMITTER_DATE: old, GIT_AUTHOR_DATE: old } });
    const older = repo.git("rev-parse", "HEAD");
    const newer = repo.commit("feat: newer");
    expect((await capture(repo, ["--commit-hash", newer])).code).toBe(0);
    expect((await capture(repo, ["--commit-hash", older])).code).toBe(0);
    expect(showEntry(repo, older)!.committedAt).toBe(old.replace(".000Z", ".000Z"));
    const list = JSON.parse((await runBin(["history", "list", "--json"], { cwd: repo.root, env: repo.env })).stdout);
    expect(list.map((e: { commitHash: string }) => e.commitHash)).toEqual([newer, older]);
    const show = await runBin(["history", "show", older], { cwd: repo.root, env: repo.env });
    expect(show.stdout).toContain("2026-01-10");
  });
});

describe("unfinished entries are visible, and the agent is reminded once", () => {
  test("16. a pending entry is marked in history, why and --json; Stop hands it back to the agent once per commit", async () => {
    repo = tempRepo();
    const a = agent(repo, "sess-pending");
    await a.prompt("do it");
    const c = agentCommit(repo, "feat: unfinished", { "u.txt": "u" });
    await a.shell("git commit -m 'feat: unfinished'", { stdout: c.stdout });
    expect(showEntry(repo, c.hash)!.summaryStatus).toBe("pending");
    const first = await a.stop("done");
    expect(first.code).toBe(0);
    // the agent, not the user, is asked: Claude Code continues the turn with the reason as its instruction
    const answer = JSON.parse(first.stdout);
    expect(answer.decision).toBe("block");
    expect(answer.systemMessage).toBeUndefined();
    expect(answer.reason).toContain(c.hash);
    expect(answer.reason).toContain("capture --commit-hash");
    // the continued turn ends with stop_hook_active: never a second block, and the agent acted, so nothing for the user
    expect((await capture(repo, ["--intent", "why"], { CLAUDE_SESSION_ID: "sess-pending" })).code).toBe(0);
    expect((await a.stopAgain("captured")).stdout).toBe("");
    expect((await a.stop("still done")).stdout).toBe("");

    const list = await runBin(["history", "list"], { cwd: repo.root, env: repo.env });
    expect(list.stdout).not.toContain("(summary pending)");

    // the next commit is handed back on its own; this time the agent does not act: the user is told, once
    const c2 = agentCommit(repo, "feat: next", { "n.txt": "n" });
    await a.shell("git commit -m 'feat: next'", { stdout: c2.stdout });
    const again = JSON.parse((await a.stop("next done")).stdout);
    expect(again.decision).toBe("block");
    expect(again.reason).toContain(c2.hash);
    expect(again.reason).not.toContain(c.hash);
    const ignored = await a.stopAgain("I will not");
    expect(ignored.code).toBe(0);
    const told = JSON.parse(ignored.stdout);
    expect(told.decision).toBeUndefined();
    expect(told.systemMessage).toContain(c2.hash);
    expect((await a.stopAgain("still not")).stdout).toBe("");
    expect((await a.stop("later")).stdout).toBe("");

    const pending = await runBin(["history", "list"], { cwd: repo.root, env: repo.env });
    expect(pending.stdout).toContain("(summary pending)");
    const show = await runBin(["history", "show", c2.hash], { cwd: repo.root, env: repo.env });
    expect(show.stdout).toContain("pending");
    const why = await runBin(["why", "n.txt"], { cwd: repo.root, env: repo.env });
    expect(why.stdout).toContain("(summary pending)");
    const json = JSON.parse((await runBin(["history", "list", "--json"], { cwd: repo.root, env: repo.env })).stdout);
    expect(json[0].summaryStatus).toBe("pending");
    expect(existsSync(live(repo, "sess-pending"))).toBe(true);
  });
});
