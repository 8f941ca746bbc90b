import { afterEach, describe, expect, test } from "bun:test";
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { binary, FIXTURES, runBin, runHook, tempRepo, untimed, type TempRepo } from "../helpers.ts";

let repos: TempRepo[] = [];
afterEach(() => {
  for (const r of repos) r.cleanup();
  repos = [];
});
function repo(): TempRepo {
  const r = tempRepo();
  repos.push(r);
  return r;
}
const SID = "4f65f198-0c0c-47a2-b6ab-5f2e30ae5cbe";
const prompts = (r: TempRepo, sid = SID, agent = "claude") => join(r.root, ".context-capture", `.${agent}-prompts-${sid}`);
/** The live log's lines, each checked to carry its time, without it. */
const readLines = (path: string) => untimed(timedLines(path));
const timedLines = (path: string) =>
  readFileSync(path, "utf8")
    .split("\n")
    .filter(Boolean)
    .map((l) => JSON.parse(l) as { role: string; content: string; at?: string });

describe("recording the conversation", () => {
  test("prompt and reply from real payloads, from a subdirectory", async () => {
    const r = repo();
    mkdirSync(join(r.root, "src", "deep"), { recursive: true });
    const fixtures = join(FIXTURES, "CoorpAcademy__serverless-plugins", "logs");
    const prompt = (JSON.parse(readFileSync(join(fixtures, "user_prompt_submit.json"), "utf8")) as Record<string, unknown>[])[0]!;
    const stop = (JSON.parse(readFileSync(join(fixtures, SID, "stop.json"), "utf8")) as Record<string, unknown>[])[0]!;
    const cwd = join(r.root, "src", "deep");
    const before = Date.now();
    const a = await runHook(r, "user-prompt-submit", { ...prompt, cwd });
    const b = await runHook(r, "stop", { ...stop, cwd });
    // each line carries the time its hook ran
    const times = timedLines(prompts(r)).map((l) => Date.parse(l.at!));
    expect(times[0]).toBeGreaterThanOrEqual(before - 1000);
    expect(times[1]).toBeGreaterThanOrEqual(times[0]!);
    expect(times[1]).toBeLessThanOrEqual(Date.now() + 1000);
    for (const res of [a, b]) {
      expect(res.code).toBe(0);
      expect(res.stdout).toBe("");
    }
    expect(readLines(prompts(r))).toEqual([
      { role: "user", content: prompt.prompt as string },
      { role: "assistant", content: stop.last_assistant_message as string },
    ]);
    const dir = join(r.root, ".context-capture");
    expect(statSync(dir).mode & 0o777).toBe(0o700);
    expect(statSync(prompts(r)).mode & 0o777).toBe(0o600);
    expect(r.git("status", "--porcelain")).toBe("");
  });

  test("a linked worktree records into its own root", async () => {
    const r = repo();
    const wt = join(r.dir, "wt");
    r.git("worktree", "add", "-q", "-b", "feature", wt);
    const res = await runHook(r, "user-prompt-submit", { session_id: "s1", cwd: join(wt), prompt: "in worktree" });
    expect(res.code).toBe(0);
    expect(readLines(join(wt, ".context-capture", ".claude-prompts-s1"))).toEqual([{ role: "user", content: "in worktree" }]);
    expect(existsSync(join(r.root, ".context-capture"))).toBe(false);
  });

  test("stop after a continuation (stop_hook_active) records the continuation's reply and never blocks", async () => {
    const r = repo();
    const res = await runHook(r, "stop", { session_id: "s1", cwd: r.root, stop_hook_active: true, last_assistant_message: "x" });
    expect(res.stdout).toBe("");
    expect(readLines(prompts(r, "s1"))).toEqual([{ role: "assistant", content: "x" }]);
  });

  test("stop falls back to the last assistant text in the transcript", async () => {
    const r = repo();
    const transcript = join(r.dir, "t.jsonl");
    writeFileSync(transcript, readFileSync(join(FIXTURES, "entireio__cli/73/7e6e3ea2ad/0/full.jsonl")));
    const res = await runHook(r, "stop", { session_id: "s1", cwd: r.root, transcript_path: transcript, stop_hook_active: false });
    expect(res.code).toBe(0);
    const lines = readLines(prompts(r, "s1"));
    expect(lines).toHaveLength(1);
    expect(lines[0]!.role).toBe("assistant");
    expect(lines[0]!.content.startsWith("Done. Fixed in `9645240`")).toBe(true);
  });

  test("session-start exports the session id into CLAUDE_ENV_FILE", async () => {
    const r = repo();
    const envFile = join(r.dir, "env.sh");
    writeFileSync(envFile, "export A=1\n");
    const res = await runHook(r, "session-start", { session_id: SID, cwd: r.root, source: "startup" }, { env: { CLAUDE_ENV_FILE: envFile } });
    expect(res.code).toBe(0);
    expect(res.stdout).toBe("");
    expect(readFileSync(envFile, "utf8")).toBe(`export A=1\nexport CLAUDE_SESSION_ID='${SID}'\n`);
    // the file really sets the variable in a shell
    const sh = Bun.spawnSync(["sh", "-c", `. "${envFile}"; printf %s "$CLAUDE_SESSION_ID"`]);
    expect(sh.stdout.toString()).toBe(SID);
  });

  test("AskUserQuestion leaves the pending-question marker; session-end stores the transcript and keeps what no commit took", async () => {
    const r = repo();
    const ask = (JSON.parse(
      readFileSync(join(FIXTURES, "CoorpAcademy__serverless-plugins/logs/abc7156b-6420-4373-a150-9b2eecad6805/post_tool_use.json"), "utf8"),
    ) as Record<string, unknown>[]).find((p) => p.tool_name === "AskUserQuestion")!;
    const sid = ask.session_id as string;
    await runHook(r, "user-prompt-submit", { session_id: sid, cwd: r.root, prompt: "p" });
    await runHook(r, "user-prompt-submit", { session_id: "other", cwd: r.root, prompt: "q" });
    const res = await runHook(r, "post-tool-use", { ...ask, cwd: r.root });
    expect(res.code).toBe(0);
    expect(res.stdout).toBe("");
    const marker = join(r.root, ".context-capture", `.pending-question-${sid}`);
    expect(existsSync(marker)).toBe(true);
    await runHook(r, "session-end", { session_id: sid, cwd: r.root, reason: "prompt_input_exit" });
    const stored = r.git("ls-tree", "-r", "--name-only", "aiflare/sessions/v1");
    expect(stored).toContain(`/${sid}/000001.jsonl`);
    // no commit took these lines yet: they wait, with the question, for the next commit of a resumed session
    expect(existsSync(marker)).toBe(true);
    expect(readLines(prompts(r, sid))[0]).toEqual({ role: "user", content: "p" });
    expect(existsSync(prompts(r, "other"))).toBe(true);
  });

  test("codex sessions use the .codex- prefix", async () => {
    const r = repo();
    await runHook(r, "user-prompt-submit", { session_id: "c1", cwd: r.root, prompt: "hi", turn_id: "t1" }, { agent: "codex" });
    expect(readLines(prompts(r, "c1", "codex"))).toEqual([{ role: "user", content: "hi" }]);
  });
});

describe("tool calls that hold nothing for aiflare", () => {
  test("a post-tool-use of a command that cannot commit or of another tool, and a pre-tool-use of no edit, touch nothing; a commit is still taken", async () => {
    const r = repo();
    const ptu = (tool: string, input: Record<string, unknown>) =>
      runHook(r, "post-tool-use", { session_id: SID, cwd: r.root, hook_event_name: "PostToolUse", tool_name: tool, tool_input: input, tool_response: { stdout: "" } });
    for (const [tool, input] of [
      ["Bash", { command: "ls -la && git status" }],
      ["Bash", { command: "bun test test/unit" }],
      ["Read", { file_path: join(r.root, "README.md") }],
      ["Edit", { file_path: join(r.root, "README.md"), old_string: "a", new_string: "b" }],
    ] as const) {
      const out = await ptu(tool, input);
      expect(out.code).toBe(0);
      expect(out.stdout).toBe("");
      // not even the session's folder or the log: the payload alone said there was nothing to do
      expect(existsSync(join(r.root, ".context-capture"))).toBe(false);
    }
    // before a tool other than an edit, recall has nothing to say
    const pre = await runHook(r, "pre-tool-use", { session_id: SID, cwd: r.root, hook_event_name: "PreToolUse", tool_name: "Bash", tool_input: { command: "ls" } });
    expect(pre.code).toBe(0);
    expect(pre.stdout).toBe("");
    expect(existsSync(join(r.root, ".context-capture"))).toBe(false);
    writeFileSync(join(r.root, "n.txt"), "n\n");
    r.git("add", "-A");
    r.git("commit", "-q", "-m", "feat: n");
    const out = await ptu("Bash", { command: 'g""it add -A && git co\\mmit -q -m "feat: n"' });
    expect(out.code).toBe(0);
    expect(out.stdout).toContain(r.git("rev-parse", "HEAD"));
  });
});

describe("the contract every hook keeps", () => {
  const events = ["session-start", "user-prompt-submit", "stop", "post-tool-use", "session-end"];

  /** Files in the repo other than .git (so "nothing written" can be checked). */
  /** What hooks left in the working tree besides the log file (which says what went wrong, never the payload). */
  const stray = (r: TempRepo) => {
    const top = readdirSync(r.root).filter((f) => f !== ".git" && f !== "README.md" && f !== ".context-capture");
    const ctx = join(r.root, ".context-capture");
    const inside = existsSync(ctx) ? readdirSync(ctx).filter((f) => f !== "aiflare.log" && f !== ".gitignore") : [];
    return [...top, ...inside];
  };
  const logOf = (r: TempRepo) => readFileSync(join(r.root, ".context-capture", "aiflare.log"), "utf8");

  const badInputs: [string, string | Uint8Array][] = [
    ["malformed JSON", "{not json"],
    ["empty stdin", ""],
    ["a JSON string", '"hello"'],
    ["missing session_id", '{"prompt":"x"}'],
    ["binary garbage", new Uint8Array([0, 255, 1, 2, 3])],
  ];
  for (const [name, input] of badInputs) {
    test(`${name}: exit 0, no stdout, nothing written`, async () => {
      const r = repo();
      for (const event of events) {
        const res = await runBin(["hook", event], { cwd: r.root, env: r.env, stdin: input });
        expect(res.code).toBe(0);
        expect(res.stdout).toBe("");
      }
      expect(stray(r)).toEqual([]);
      const log = logOf(r);
      expect(log.split("\n").filter((l) => / warn hook \S+: payload (is not JSON|has an unexpected shape)/.test(l))).toHaveLength(events.length);
      for (const secret of ["not json", "hello", '"x"']) expect(log).not.toContain(secret);
    });
  }

  const badIds = ["../../etc/passwd", "a'b", "$(touch pwned)", "x".repeat(129), "a b", ""];
  for (const sid of badIds) {
    test(`session id ${JSON.stringify(sid.slice(0, 30))} writes nothing anywhere`, async () => {
      const r = repo();
      const envFile = join(r.dir, "env.sh");
      writeFileSync(envFile, "");
      for (const event of events) {
        const res = await runHook(r, event, { session_id: sid, cwd: r.root, prompt: "p", last_assistant_message: "a", tool_name: "AskUserQuestion" }, { env: { CLAUDE_ENV_FILE: envFile } });
        expect(res.code).toBe(0);
        expect(res.stdout).toBe("");
      }
      expect(stray(r)).toEqual([]);
      const log = logOf(r);
      expect(log).toContain("invalid session id; nothing written");
      if (sid.length > 2) expect(log).not.toContain(sid);
      expect(readFileSync(envFile, "utf8")).toBe("");
      expect(existsSync(join(r.dir, "pwned"))).toBe(false);
    });
  }

  test("stdin over the 8 MiB cap is refused without writing", async () => {
    const r = repo();
    const huge = JSON.stringify({ session_id: "s1", cwd: r.root, prompt: "x".repeat(9 * 1024 * 1024) });
    const res = await runHook(r, "user-prompt-submit", huge);
    expect(res.code).toBe(0);
    expect(existsSync(prompts(r, "s1"))).toBe(false);
  });

  test("a cwd outside any repository", async () => {
    const r = repo();
    const outside = join(r.dir, "home");
    const res = await runHook(r, "user-prompt-submit", { session_id: "s1", cwd: outside, prompt: "p" }, { cwd: outside });
    expect(res.code).toBe(0);
    expect(res.stdout).toBe("");
    expect(readdirSync(outside)).toEqual([]);
  });

  test("an unwritable .context-capture is logged, not fatal", async () => {
    const r = repo();
    await runHook(r, "user-prompt-submit", { session_id: "s1", cwd: r.root, prompt: "first" });
    const dir = join(r.root, ".context-capture");
    writeFileSync(join(dir, ".claude-prompts-s1"), "", { flag: "w" });
    chmodSync(join(dir, ".claude-prompts-s1"), 0o400);
    chmodSync(dir, 0o500);
    try {
      // root ignores permission bits; make the target a directory so the write fails for everyone
      const target = join(dir, ".claude-prompts-s2");
      mkdirSync(target);
      const res = await runHook(r, "user-prompt-submit", { session_id: "s2", cwd: r.root, prompt: "second" });
      expect(res.code).toBe(0);
      expect(res.stdout).toBe("");
      expect(res.stderr).toContain("hook failed");
    } finally {
      chmodSync(dir, 0o700);
    }
  });

  // util-linux `script` gives the hook a pseudo-terminal as stdin, as when a user runs it by hand
  test.skipIf(!Bun.which("script"))("a terminal on stdin: exit 0 at once, nothing written", async () => {
    const r = repo();
    const proc = Bun.spawn(["script", "-qec", `${binary()} hook user-prompt-submit; echo "rc=$?"`, "/dev/null"], {
      cwd: r.root,
      env: r.env,
      stdin: "ignore",
      stdout: "pipe",
    });
    const out = await Promise.race([new Response(proc.stdout).text(), Bun.sleep(15_000).then(() => "hung")]);
    proc.kill();
    expect(out).toContain("rc=0");
    expect(existsSync(join(r.root, ".context-capture"))).toBe(false);
  });

  test("a stdin nobody closes does not hang the hook", async () => {
    const r = repo();
    const proc = Bun.spawn([binary(), "hook", "user-prompt-submit"], { cwd: r.root, env: r.env, stdin: "pipe", stdout: "pipe" });
    proc.stdin.write('{"session_id":"s1","prompt":"never finished"');
    proc.stdin.flush();
    const code = await Promise.race([proc.exited, Bun.sleep(15_000).then(() => "hung")]);
    proc.kill();
    expect(code).toBe(0);
    expect(existsSync(prompts(r, "s1"))).toBe(false);
  });

  test("a payload written in two parts, the pipe closed later, is read whole", async () => {
    const r = repo();
    const proc = Bun.spawn([binary(), "hook", "user-prompt-submit"], { cwd: r.root, env: r.env, stdin: "pipe", stdout: "pipe" });
    proc.stdin.write('{"session_id":"s1","prompt":"first half');
    proc.stdin.flush();
    await Bun.sleep(300);
    proc.stdin.write(' and second half"}');
    proc.stdin.end();
    expect(await Promise.race([proc.exited, Bun.sleep(15_000).then(() => "hung")])).toBe(0);
    expect(readFileSync(prompts(r, "s1"), "utf8")).toEndWith("}\n");
    expect(readLines(prompts(r, "s1"))).toEqual([{ role: "user", content: "first half and second half" }]);
  });

  test("a payload of several reads, a character split between them, is read exactly", async () => {
    const r = repo();
    // 2-byte characters from an odd byte offset: a read of 64 KiB ends inside one
    const head = JSON.stringify({ session_id: "s1", cwd: r.root, prompt: "" }).slice(0, -2);
    const prompt = `${head.length % 2 ? "" : "x"}${"é".repeat(100_000)}\u{1F600}`;
    expect((await runHook(r, "user-prompt-submit", `${head}${JSON.stringify(prompt).slice(1)}}`)).code).toBe(0);
    expect(readLines(prompts(r, "s1"))).toEqual([{ role: "user", content: prompt }]);
  });

  test("a payload in a file redirected to stdin", async () => {
    const r = repo();
    const file = join(r.root, "..", "payload.json");
    writeFileSync(file, JSON.stringify({ session_id: "s1", prompt: "from a file" }));
    const proc = Bun.spawn([binary(), "hook", "user-prompt-submit"], { cwd: r.root, env: r.env, stdin: Bun.file(file), stdout: "pipe" });
    expect(await proc.exited).toBe(0);
    expect(readFileSync(prompts(r, "s1"), "utf8")).toContain('"from a file"');
  });

  test("parallel sessions never interleave or lose lines", async () => {
    const r = repo();
    const sessions = ["p1", "p2", "p3", "p4"];
    const perSession = 25;
    const big = "y".repeat(20_000);
    await Promise.all(
      sessions.flatMap((sid) =>
        Array.from({ length: perSession }, (_, i) =>
          runHook(r, "user-prompt-submit", { session_id: sid, cwd: r.root, prompt: `${sid}-${i}-${big}` }),
        ),
      ),
    );
    for (const sid of sessions) {
      const lines = readLines(prompts(r, sid));
      expect(lines).toHaveLength(perSession);
      const seen = new Set(lines.map((l) => l.content.split("-").slice(0, 2).join("-")));
      expect(seen.size).toBe(perSession);
      for (const l of lines) expect(l.content.endsWith(big)).toBe(true);
    }
    // a hundred hook processes at once: on a loaded 2-core machine they take seconds (before the session lock too)
  }, 30_000);

  test("prompt text never reaches the log", async () => {
    const r = repo();
    const secret = "very-private-prompt-text-123";
    await runHook(r, "user-prompt-submit", { session_id: "s1", cwd: r.root, prompt: secret });
    await runHook(r, "stop", { session_id: "s1", cwd: r.root, transcript_path: "/nonexistent.jsonl" });
    await runHook(r, "user-prompt-submit", `{"session_id":"s1","cwd":${JSON.stringify(r.root)},"prompt":"${secret}"`);
    const log = join(r.root, ".context-capture", "aiflare.log");
    if (existsSync(log)) expect(readFileSync(log, "utf8")).not.toContain(secret);
  });
});

describe("the command line", () => {
  test("--help lists public commands and hides hook; --version prints the version", async () => {
    const r = repo();
    const help = await runBin(["--help"], { cwd: r.root, env: r.env });
    expect(help.code).toBe(0);
    expect(help.stdout).not.toMatch(/\bhook\b/);
    const version = await runBin(["--version"], { cwd: r.root, env: r.env });
    expect(version.stdout.trim()).toBe(require("../../package.json").version);
    const hookHelp = await runBin(["hook", "--help"], { cwd: r.root, env: r.env });
    expect(hookHelp.stdout).toContain("user-prompt-submit");
  });

  test("an unknown command fails with the usage exit code 2", async () => {
    const r = repo();
    const res = await runBin(["no-such-command"], { cwd: r.root, env: r.env });
    expect(res.code).toBe(2);
  });
});
