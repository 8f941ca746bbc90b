/**
 * Cursor sessions through the compiled binary's hooks: Cursor's own `.cursor/hooks.json`, Claude Code's hook files
 * (which Cursor runs too, with its own payloads), and both at once — each commit recorded once, as Cursor's.
 * Payloads: test/fixtures/agents/cursor (see SOURCE.md there).
 */
import { afterEach, describe, expect, setDefaultTimeout, test } from "bun:test";
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { ROOT, runBin, runHook, tempRepo, type RunResult, type TempRepo } from "../helpers.ts";
import { agentCommit, importReproduces, records, showEntry, storedTranscript } from "./capture-support.ts";

setDefaultTimeout(60_000);

let repo: TempRepo | undefined;
afterEach(() => {
  repo?.cleanup();
  repo = undefined;
});

const DIR = join(ROOT, "test", "fixtures", "agents", "cursor");
const payload = (name: string) => JSON.parse(readFileSync(join(DIR, `${name}.json`), "utf8")) as Record<string, unknown>;

/** Which hook files fire for each Cursor event: its own (`--agent cursor`), Claude Code's (no flag), or both. */
type Via = "cursor" | "claude" | "both";

/**
 * One Cursor conversation against a temp repository. `via` says which installed hook files Cursor runs: with both,
 * every event that both files hook arrives twice, once through each, as Cursor does.
 */
function cursorSession(r: TempRepo, id: string, via: Via) {
  const base = { conversation_id: id, session_id: id, workspace_roots: [r.root] };
  const fire = async (event: string, name: string, extra: Record<string, unknown>, claudeToo = true): Promise<RunResult[]> => {
    const body = { ...payload(name), ...base, ...extra };
    const out: RunResult[] = [];
    if (via !== "claude") out.push(await runHook(r, event, body, { agent: "cursor" }));
    if (via !== "cursor" && claudeToo) out.push(await runHook(r, event, body));
    for (const o of out) expect(o.code).toBe(0);
    return out;
  };
  return {
    start: () => fire("session-start", "sessionStart", {}),
    prompt: (prompt: string) => fire("user-prompt-submit", "beforeSubmitPrompt", { prompt }),
    /** Claude Code's hooks have no afterAgentResponse: only Cursor's own file sends the reply this way */
    reply: (text: string) => fire("agent-response", "afterAgentResponse", { text }, false),
    stop: (loopCount = 0, transcript: string | null = null) => fire("stop", "stop", { loop_count: loopCount, transcript_path: transcript }),
    shell: (command: string, output = "") =>
      fire("post-tool-use", "postToolUse", {
        tool_input: { command, description: "run" },
        tool_output: JSON.stringify({ output, exitCode: 0 }),
      }),
    end: () => fire("session-end", "sessionEnd", {}),
  };
}

const liveFiles = (r: TempRepo) => (existsSync(join(r.root, ".context-capture")) ? readdirSync(join(r.root, ".context-capture")) : []);

const install = async (r: TempRepo, ...args: string[]) => {
  const out = await runBin(["install", ...args], { cwd: r.root, env: r.env });
  expect(out.code).toBe(0);
  return out;
};

/** Plays one request with two commits, a reminder, and a second request with a third commit. */
async function playScenario(r: TempRepo, id: string, via: Via) {
  const s = cursorSession(r, id, via);
  await s.start();
  await s.prompt("add a parser and its tests");
  const a = agentCommit(r, "add parser", { "parser.ts": "export const p = 1;\n" });
  const afterFirst = await s.shell("git commit -m 'add parser'", a.stdout);
  const b = agentCommit(r, "add parser tests", { "parser.test.ts": "test\n" });
  await s.shell("git commit -m 'add parser tests'", b.stdout);
  await s.reply("Added the parser and its tests.");
  const stop = await s.stop();
  await s.prompt("now document it");
  const c = agentCommit(r, "document parser", { "README.md": "parser\n" });
  await s.shell("git commit -m 'document parser'", c.stdout);
  await s.reply("Documented.");
  await s.stop();
  await s.end();
  return { hashes: [a.hash, b.hash, c.hash], afterFirst, stop };
}

describe("Cursor", () => {
  test("its own hooks: entries of agent type CURSOR, grouped per request, the conversation once, answers in Cursor's shape", async () => {
    repo = tempRepo();
    const { hashes, afterFirst, stop } = await playScenario(repo, "cur-native", "cursor");
    const [a, b, c] = hashes.map((h) => showEntry(repo!, h)!) as [Record<string, any>, Record<string, any>, Record<string, any>];
    for (const e of [a, b, c]) {
      expect(e.agentType).toBe("CURSOR");
      expect(e.claudeSessionId).toBe("cur-native");
      expect(e.model).toBe("gpt-5.2-codex-xhigh-fast");
    }
    expect(a!.groupRootId).toBeNull();
    expect(b!.groupRootId).toBe(hashes[0]);
    expect(c!.groupRootId).toBeNull();
    // the capture reminder reaches the model as Cursor's postToolUse context
    const ctx = JSON.parse(afterFirst[0]!.stdout);
    expect(ctx.additional_context).toContain("capture");
    expect(ctx.hookSpecificOutput).toBeUndefined();
    // the end of the turn asks for the summaries as a follow-up message, Cursor's way to continue
    const follow = JSON.parse(stop[0]!.stdout);
    expect(follow.followup_message).toContain(hashes[0]!.slice(0, 7));
    expect(follow.decision).toBeUndefined();
    expect(records(storedTranscript(repo, "cur-native"))).toEqual([
      { role: "user", content: "add a parser and its tests" },
      { role: "assistant", content: "Added the parser and its tests." },
      { role: "user", content: "now document it" },
      { role: "assistant", content: "Documented." },
    ]);
    expect(liveFiles(repo).some((n) => n.startsWith(".claude-"))).toBe(false);
    const list = await runBin(["history", "list", "--json"], { cwd: repo.root, env: repo.env });
    const listed = new Map((JSON.parse(list.stdout) as Record<string, any>[]).map((e) => [e.commitHash, e]));
    expect(hashes.map((h) => [listed.get(h)?.agentType, listed.get(h)?.groupRootId ?? null])).toEqual([
      ["CURSOR", null],
      ["CURSOR", hashes[0]],
      ["CURSOR", null],
    ]);
    // the same conversation in Cursor's own transcript (lines of the fixture's shape): import finds the same session
    const shell = (command: string) => ({ role: "assistant", message: { content: [{ type: "tool_use", name: "Shell", input: { command } }] } });
    const said = (role: string, text: string) => ({ role, message: { content: [{ type: "text", text }] } });
    const dir = join(repo.home, ".cursor", "projects", repo.root.slice(1).replace(/[^A-Za-z0-9]/g, "-"), "agent-transcripts");
    mkdirSync(dir, { recursive: true });
    const lines = [
      said("user", "<user_query>\nadd a parser and its tests\n</user_query>"),
      shell("git commit -m 'add parser'"),
      shell("git commit -m 'add parser tests'"),
      said("assistant", "Added the parser and its tests."),
      said("user", "<user_query>\nnow document it\n</user_query>"),
      shell("git commit -m 'document parser'"),
      said("assistant", "Documented."),
    ];
    writeFileSync(join(dir, "cur-native.jsonl"), lines.map((l) => JSON.stringify(l)).join("\n") + "\n");
    await importReproduces(repo, repo.env, hashes, 3);
  });

  test("through Claude Code's hook files only: recorded as Cursor's session, the reply read from Cursor's transcript", async () => {
    repo = tempRepo();
    const s = cursorSession(repo, "cur-claude", "claude");
    await s.start();
    await s.prompt("create a file");
    const a = agentCommit(repo, "create file", { "f.txt": "x\n" });
    await s.shell("git commit -m 'create file'", a.stdout);
    const transcript = join(repo.home, "cur-claude.jsonl");
    writeFileSync(transcript, readFileSync(join(DIR, "transcript.jsonl")));
    await s.stop(0, transcript);
    await s.end();
    const e = showEntry(repo, a.hash)!;
    expect(e.agentType).toBe("CURSOR");
    expect(records(storedTranscript(repo, "cur-claude"))).toEqual([
      { role: "user", content: "create a file" },
      { role: "assistant", content: "Created the file." },
    ]);
    expect(liveFiles(repo).some((n) => n.startsWith(".claude-"))).toBe(false);
  });

  test("both hook files installed: every event arrives twice, each commit is recorded once, as Cursor's", async () => {
    repo = tempRepo();
    await install(repo);
    await install(repo, "--agent", "cursor");
    expect(existsSync(join(repo.root, ".claude", "settings.local.json"))).toBe(true);
    const { hashes } = await playScenario(repo, "cur-both", "both");
    const entries = repo.git("ls-tree", "-r", "--name-only", "aiflare/timeline/v1").split("\n").filter(Boolean);
    expect(entries).toHaveLength(3);
    for (const h of hashes) expect(showEntry(repo, h)!.agentType).toBe("CURSOR");
    expect(records(storedTranscript(repo, "cur-both"))).toEqual([
      { role: "user", content: "add a parser and its tests" },
      { role: "assistant", content: "Added the parser and its tests." },
      { role: "user", content: "now document it" },
      { role: "assistant", content: "Documented." },
    ]);
    expect(liveFiles(repo).some((n) => n.startsWith(".claude-"))).toBe(false);
  });

  test("capture with the hash from the reminder keeps the entry Cursor's", async () => {
    repo = tempRepo();
    const s = cursorSession(repo, "cur-why", "cursor");
    await s.prompt("fix the bug");
    const a = agentCommit(repo, "fix bug", { "bug.ts": "fixed\n" });
    await s.shell("git commit -m 'fix bug'", a.stdout);
    const out = await runBin(
      ["capture", "--commit-hash", a.hash, "--title", "Fix the bug", "--intent", "The parser dropped the last line", "--tag", "BUGFIX"],
      { cwd: repo.root, env: repo.env },
    );
    expect(out.code).toBe(0);
    const e = showEntry(repo, a.hash)!;
    expect(e.agentType).toBe("CURSOR");
    expect(e.claudeSessionId).toBe("cur-why");
    expect(e.summaryStatus).not.toBe("pending");
  });

  test("install --agent cursor merges into hooks.json (known events, no //), doctor reads it as Cursor does, uninstall takes out exactly its part", async () => {
    repo = tempRepo();
    const file = join(repo.root, ".cursor", "hooks.json");
    mkdirSync(join(repo.root, ".cursor"));
    const before = '{"version":1,"hooks":{"afterFileEdit":[{"command":"./format.sh"}]}}\n';
    writeFileSync(file, before);
    await install(repo, "--agent", "cursor");
    const text = readFileSync(file, "utf8");
    const doc = JSON.parse(text);
    expect(doc.version).toBe(1);
    expect(doc.hooks.afterFileEdit).toEqual([{ command: "./format.sh" }]);
    expect(Object.keys(doc.hooks).sort()).toEqual(
      ["afterAgentResponse", "afterFileEdit", "beforeSubmitPrompt", "postToolUse", "postToolUseFailure", "sessionEnd", "sessionStart", "stop"].sort(),
    );
    expect(doc.hooks.afterAgentResponse[0].command).toMatch(/ hook agent-response --agent cursor$/);
    expect(text).not.toContain("//");
    // no Claude Code settings for a Cursor-only install
    expect(existsSync(join(repo.root, ".claude", "settings.local.json"))).toBe(false);
    const again = await install(repo, "--agent", "cursor");
    expect(again.stdout).toContain("unchanged  .cursor/hooks.json");

    const doctor = await runBin(["doctor"], { cwd: repo.root, env: repo.env });
    expect(doctor.stdout).toContain("Cursor hooks in .cursor/hooks.json");
    expect(doctor.stdout).toContain("Cursor reads .cursor/hooks.json as written");

    // a user's own edit after install stays; only aiflare's entries go
    const edited = { ...doc, hooks: { ...doc.hooks, stop: [...doc.hooks.stop, { command: "./notify.sh" }] } };
    writeFileSync(file, JSON.stringify(edited, null, 2) + "\n");
    await runBin(["uninstall"], { cwd: repo.root, env: repo.env });
    expect(JSON.parse(readFileSync(file, "utf8"))).toEqual({ version: 1, hooks: { afterFileEdit: [{ command: "./format.sh" }], stop: [{ command: "./notify.sh" }] } });

    // untouched since install: put back byte for byte
    writeFileSync(file, before);
    await install(repo, "--agent", "cursor");
    await runBin(["uninstall"], { cwd: repo.root, env: repo.env });
    expect(readFileSync(file, "utf8")).toBe(before);
  });

  test("doctor fails a Cursor hooks file Cursor would misread: unknown events, strings with //", async () => {
    repo = tempRepo();
    await install(repo, "--agent", "cursor");
    const file = join(repo.root, ".cursor", "hooks.json");
    const doc = JSON.parse(readFileSync(file, "utf8"));
    doc.hooks.UserPromptSubmit = [{ command: "echo see https://example.com" }];
    writeFileSync(file, JSON.stringify(doc, null, 2));
    const doctor = await runBin(["doctor"], { cwd: repo.root, env: repo.env });
    expect(doctor.code).not.toBe(0);
    expect(doctor.stdout + doctor.stderr).toContain("events Cursor does not know: UserPromptSubmit");
    expect(doctor.stdout + doctor.stderr).toContain("a string holds //");
  });
});
