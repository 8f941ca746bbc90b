/**
 * Claude Code itself (the npm package at the pinned version) runs sessions in a test repository with aiflare
 * installed, against a scripted Messages API on 127.0.0.1: its own settings parsing, hook payloads, `if` filters,
 * CLAUDE_ENV_FILE and SessionEnd. Each scenario asserts on what aiflare stored and on what reached the model.
 */
import { afterEach, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { binary, captureSettled, tempRepo, type TempRepo } from "../helpers.ts";
import { aiflareObjects, fsckClean, records, showEntry, storedTranscript } from "../e2e/capture-support.ts";
import { claudeEnv, claudePrint, installAiflare, settleClaudeHome } from "./claude-support.ts";
import { claudeTui } from "./tui.ts";
import { ensureAgent } from "./install.ts";
import { anthropicServer, type ModelServer, type Step } from "./model-server.ts";

setDefaultTimeout(180_000);

let cleanups: (() => void)[] = [];
beforeAll(() => {
  binary();
  ensureAgent("claude");
});
afterEach(() => {
  for (const c of cleanups.reverse()) c();
  cleanups = [];
});

async function setup(script: Step[]): Promise<{ repo: TempRepo; server: ModelServer }> {
  const repo = tempRepo();
  const server = anthropicServer(script);
  cleanups.push(() => repo.cleanup(), () => server.stop());
  settleClaudeHome(repo);
  await installAiflare(repo);
  return { repo, server };
}

const bash = (command: string): Step => ({ tool: "Bash", input: { command, description: "run" } });
const SESSION = "5d0c1a2e-7b3f-4c8d-9e1a-2b3c4d5e6f70";

describe("Claude Code, the real client", () => {
  test("one request, two commits (plain and git -C), the why written with aiflare capture: one group, the reminder reached the model", async () => {
    const { repo, server } = await setup([
      bash("printf 'export const a = 1;\\n' > a.ts && git add a.ts && git commit -q -m 'feat: add a'"),
      bash(
        "aiflare capture --title 'Add a' --intent 'Problem: no a. Solution: add it. Effect: a exists.' " +
          "--diff-summary '- a.ts: new constant' --tag FEATURE",
      ),
      bash(`printf 'export const b = 2;\\n' > b.ts && git -C "$PWD" add b.ts && git -C "$PWD" commit -q -m 'feat: add b'`),
      { text: "Added a and b in two commits." },
      // the Stop hook hands b back: the agent writes its summary, then stops for good
      bash(`${binary()} capture --title 'Add b' --intent 'Problem: no b. Solution: add it.' --diff-summary '- b.ts: new constant' --tag FEATURE`),
      { text: "The summary of b is written." },
    ]);
    const r = await claudePrint(repo, server, "Add the constants a and b, one commit each.", ["--session-id", SESSION]);
    expect(r.code).toBe(0);
    expect(server.remaining()).toBe(0);

    const [b, a] = repo.git("rev-list", "--max-count=2", "HEAD").split("\n");
    const ea = showEntry(repo, a!)!;
    const eb = showEntry(repo, b!)!;
    expect(ea.claudeSessionId).toBe(SESSION);
    expect(ea.agentType).toBe("CLAUDE_CODE");
    expect(ea.groupRootId).toBeNull();
    // the agent wrote the why through `aiflare capture`, its session found through CLAUDE_SESSION_ID
    expect(ea.intent).toContain("Solution: add it.");
    expect(ea.title).toBe("Add a");
    expect(records(ea.conversationSnippet).find((l) => l.role === "user")?.content).toContain("Add the constants a and b");
    // `git -C dir commit` is caught too, and joins the same request
    expect(eb.groupRootId).toBe(a);
    expect(eb.changedFiles).toEqual(["b.ts"]);

    // the model was told, after each commit, to write its summary
    const afterCommit = server.requests.filter((q) => q.main).map((q) => JSON.stringify(q.body.messages.at(-1)));
    expect(afterCommit.filter((m) => m.includes("aiflare capture") || m.includes("context-capture")).length).toBeGreaterThanOrEqual(2);

    // the Stop reminder reached the model (not only the user), named b, and the agent acted on it once
    const stops = server.requests.filter((q) => q.main && JSON.stringify(q.body.messages.at(-1)).includes("still has no summary"));
    expect(stops.length).toBe(1);
    expect(JSON.stringify(stops[0]!.body.messages.at(-1))).toContain(b!);
    expect(eb.intent).toBe("Problem: no b. Solution: add it.");
    // SessionEnd stored the conversation, last reply included
    const stored = records(storedTranscript(repo, SESSION));
    expect(stored.at(-1)).toEqual({ role: "assistant", content: "The summary of b is written." });
    expect(fsckClean(repo)).toBe(true);
  });

  test("a resumed session keeps its id; a new typed request starts a new group", async () => {
    const { repo, server } = await setup([
      bash("echo one > one.txt && git add one.txt && git commit -q -m 'feat: one'"),
      { text: "One is in." },
      bash(`${binary()} capture --title 'One' --intent 'Why one.' --diff-summary '- one.txt' --tag FEATURE`),
      { text: "Summary of one written." },
      bash("cd sub && echo two > two.txt && git add two.txt && git commit -q -m 'feat: two'"),
      { text: "Two is in." },
      bash(`${binary()} capture --title 'Two' --intent 'Why two.' --diff-summary '- sub/two.txt' --tag FEATURE`),
      { text: "Summary of two written." },
    ]);
    Bun.spawnSync(["mkdir", "-p", `${repo.root}/sub`]);
    expect((await claudePrint(repo, server, "Add one.", ["--session-id", SESSION])).code).toBe(0);
    expect((await claudePrint(repo, server, "Now add two.", ["--resume", SESSION])).code).toBe(0);
    const [two, one] = repo.git("rev-list", "--max-count=2", "HEAD").split("\n");
    expect(showEntry(repo, one!)!.claudeSessionId).toBe(SESSION);
    const e2 = showEntry(repo, two!)!;
    expect(e2.claudeSessionId).toBe(SESSION);
    expect(e2.groupRootId).toBeNull();
    expect(records(e2.conversationSnippet).filter((l) => l.role === "user").map((l) => l.content)).toEqual(["Now add two."]);
    const stored = records(storedTranscript(repo, SESSION)).map((l) => l.content);
    expect(stored).toContain("One is in.");
    expect(stored).toContain("Two is in.");
  });

  test("a command that commits and then fails is captured", async () => {
    const { repo, server } = await setup([
      bash("echo x > x.txt && git add x.txt && git commit -q -m 'fix: x' && false"),
      { text: "Committed, but the check failed." },
    ]);
    expect((await claudePrint(repo, server, "Fix x.", ["--session-id", SESSION])).code).toBe(0);
    const head = repo.git("rev-parse", "HEAD");
    expect(showEntry(repo, head)?.claudeSessionId).toBe(SESSION);
  });

  test("a secret typed in a prompt reaches no git object", async () => {
    const secret = "sk-ant-api03-" + "Zq8".repeat(30) + "AA";
    const { repo, server } = await setup([
      bash("echo cfg > cfg.txt && git add cfg.txt && git commit -q -m 'chore: config'"),
      { text: "Configured." },
    ]);
    expect((await claudePrint(repo, server, `Use this key: ${secret} and commit the config.`, ["--session-id", SESSION])).code).toBe(0);
    // the model saw it (the user sent it), aiflare stored it nowhere
    expect(server.seen().includes(secret)).toBe(true);
    const head = repo.git("rev-parse", "HEAD");
    expect(showEntry(repo, head)).not.toBeNull();
    const objects = aiflareObjects(repo);
    expect(objects.count).toBeGreaterThan(0);
    expect(objects.text).not.toContain(secret);
    expect(objects.text).not.toContain("Zq8Zq8Zq8");
  });

  test("recall: before an Edit of a file with a recorded why, the why reaches the model", async () => {
    const { repo, server } = await setup([
      bash("printf 'export const rate = 0.2;\\n' > rate.ts && git add rate.ts && git commit -q -m 'feat: rate'"),
      bash(`${binary()} capture --title 'Rate for the pilot' --intent 'The pilot customers were promised a 20% rate.' --diff-summary '- rate.ts' --tag FEATURE`),
      { text: "Rate added." },
    ]);
    expect((await claudePrint(repo, server, "Add the pilot rate.", ["--session-id", SESSION])).code).toBe(0);
    const path = `${repo.root}/rate.ts`;
    const second = anthropicServer([
      { tool: "Read", input: { file_path: path } },
      { tool: "Edit", input: { file_path: path, old_string: "0.2", new_string: "0.25" } },
      { text: "Changed." },
    ]);
    cleanups.push(() => second.stop());
    expect((await claudePrint(repo, second, "Raise the rate.", ["--session-id", "6e1d2b3f-8c4a-4d9e-8f2b-3c4d5e6f7081"])).code).toBe(0);
    expect(second.remaining()).toBe(0);
    expect(second.seen().includes("The pilot customers were promised a 20% rate.")).toBe(true);
  });
});

describe("Claude Code, interactive in a terminal", () => {
  const ask = (question: string, options: string[]): Step => ({
    tool: "AskUserQuestion",
    input: { questions: [{ question, header: "Choice", multiSelect: false, options: options.map((label) => ({ label, description: `${label} option` })) }] },
  });

  test("an AskUserQuestion answer continues the request; a new typed request starts a new group", async () => {
    const { repo, server } = await setup([
      bash("echo 1 > p1.txt && git add p1.txt && git commit -q -m 'feat: part 1'"),
      ask("Which storage for part 2?", ["SQLite", "Files"]),
      bash("echo 2 > p2.txt && git add p2.txt && git commit -q -m 'feat: part 2'"),
      { text: "Parts 1 and 2 are in." },
      // the Stop reminder names both commits: one capture each (the newest waiting one first)
      bash(`${binary()} capture --title 'Part 2' --intent 'Why part 2.' --diff-summary '- p2.txt' --tag FEATURE`),
      bash(`${binary()} capture --title 'Part 1' --intent 'Why part 1.' --diff-summary '- p1.txt' --tag FEATURE`),
      { text: "Both summaries are written." },
      bash("echo 3 > p3.txt && git add p3.txt && git commit -q -m 'feat: part 3'"),
      { text: "Part 3 is in." },
      bash(`${binary()} capture --title 'Part 3' --intent 'Why part 3.' --diff-summary '- p3.txt' --tag FEATURE`),
      { text: "All three parts are in and described." },
    ]);
    const tui = claudeTui(repo.root, claudeEnv(repo, server), ["--session-id", SESSION]);
    cleanups.push(() => void tui.exit());
    await tui.waitFor("bypass permissions on");
    await tui.submit("Build parts 1 and 2.");
    await tui.waitFor("Which storage for part 2?");
    await tui.waitFor("1. SQLite");
    await tui.press("Enter", "Enter to select");
    await tui.waitFor("Both summaries are written.");
    await tui.submit("Now build part 3.");
    await tui.waitFor("All three parts are in and described.");
    await tui.exit();
    await captureSettled(repo.root);

    const [p3, p2, p1] = repo.git("rev-list", "--max-count=3", "HEAD").split("\n");
    const e1 = showEntry(repo, p1!)!;
    const e2 = showEntry(repo, p2!)!;
    const e3 = showEntry(repo, p3!)!;
    expect(e1.groupRootId).toBeNull();
    expect(e2.continuation).toBe(true);
    expect(e2.groupRootId).toBe(p1);
    expect(e2.conversationSnippet).toContain("SQLite");
    expect(e3.groupRootId).toBeNull();
    expect(records(e3.conversationSnippet).filter((l) => l.role === "user").map((l) => l.content)).toEqual(["Now build part 3."]);
    // the answer reached the model as the tool's result
    expect(server.seen().includes("SQLite")).toBe(true);
    expect([e1.intent, e2.intent, e3.intent]).toEqual(["Why part 1.", "Why part 2.", "Why part 3."]);
    expect(records(storedTranscript(repo, SESSION)).at(-1)).toEqual({ role: "assistant", content: "All three parts are in and described." });
  });

  test("/clear hands the open request over to the next session's context", async () => {
    const { repo, server } = await setup([
      bash("echo a > a.txt && git add a.txt && git commit -q -m 'feat: half of the import'"),
      { text: "Half of the import is done." },
      bash(`${binary()} capture --title 'Half of the import' --intent 'Why half.' --diff-summary '- a.txt' --tag FEATURE`),
      { text: "Summary written; the CSV part is next." },
      { text: "Carrying on." },
    ]);
    const tui = claudeTui(repo.root, claudeEnv(repo, server), ["--session-id", SESSION]);
    cleanups.push(() => void tui.exit());
    await tui.waitFor("bypass permissions on");
    await tui.submit("Write the importer for the legacy export.");
    await tui.waitFor("the CSV part is next.");
    await tui.submit("/clear");
    await Bun.sleep(1500);
    const before = server.requests.filter((r) => r.main).length;
    await tui.submit("Go on.");
    await tui.waitFor("Carrying on.");
    await tui.exit();
    await captureSettled(repo.root);
    const first = server.requests.filter((r) => r.main)[before]!;
    const context = JSON.stringify(first.body.messages);
    // the new session starts knowing what the cleared one was doing
    expect(context.includes("Write the importer for the legacy export.")).toBe(true);
    expect(context.includes("the CSV part is next.")).toBe(true);
    expect(context.includes(SESSION)).toBe(true);
    expect(context.includes("Go on.")).toBe(true);
  });
});
