/**
 * Real data: the hook payloads Claude Code sent in a published session (CoorpAcademy/serverless-plugins,
 * see fixtures SOURCES.md) go through aiflare's own prompt and stop hooks; the recorded conversation is cut
 * at the session's three real `git commit`s into entries (SPEC §5 grouping), and the history views must
 * read well on it.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { conversationLines } from "../../src/util/jsonl.ts";
import { binary, FIXTURES, runBin, runHook, tempRepo, type TempRepo } from "../helpers.ts";
import type { Entry } from "../../src/store/entry.ts";
import { makeEntry, writeTimeline } from "../timeline-fixture.ts";

const SESSION = "4f65f198-0c0c-47a2-b6ab-5f2e30ae5cbe";
const LOGS = join(FIXTURES, "CoorpAcademy__serverless-plugins", "logs");
type Payload = Record<string, unknown> & { session_id: string };
const load = (file: string) => JSON.parse(readFileSync(join(LOGS, file), "utf8")) as Payload[];

let repo: TempRepo;
const hashes: string[] = [];
let prompts: Payload[];
let stops: Payload[];
let messages: string[];

beforeAll(async () => {
  binary();
  repo = tempRepo();
  prompts = load("user_prompt_submit.json").filter((p) => p.session_id === SESSION);
  stops = load(`${SESSION}/stop.json`);
  const commits = (messages = load(`${SESSION}/post_tool_use.json`)
    .filter((p) => p.tool_name === "Bash" && /git commit/.test(String((p.tool_input as { command: string }).command)))
    .map((p) => /-m "([^"]+)"/.exec((p.tool_input as { command: string }).command)?.[1] ?? "commit"));
  expect(commits).toHaveLength(3);

  const hook = async (event: string, payload: Payload) => {
    const r = await runHook(repo, event, { ...payload, cwd: repo.root, transcript_path: "/nonexistent.jsonl" });
    expect(r.code).toBe(0);
  };
  const log = () => readFileSync(join(repo.root, ".context-capture", `.claude-prompts-${SESSION}`), "utf8").split(/(?<=\n)/);
  let offset = 0;
  let previous: { hash: string; root: string | null } | null = null;
  const entries: Entry[] = [];
  const cut = (message: string, minute: number) => {
    const lines = log();
    const delta = lines.slice(offset).join("");
    offset = lines.length;
    const hash = repo.commit(message, { [`f${minute}.txt`]: message });
    const hasUser = conversationLines(delta).some((l) => l.role === "user");
    const root = previous && !hasUser ? (previous.root ?? previous.hash) : null;
    previous = { hash, root };
    hashes.push(hash);
    entries.push(
      makeEntry({
        commitHash: hash,
        title: message.slice(0, 50),
        claudeSessionId: SESSION,
        groupRootId: root,
        tag: minute === 40 ? "TEST" : "DOCS",
        conversationSnippet: delta,
        changedFiles: [`f${minute}.txt`],
        capturedAt: new Date(Date.UTC(2026, 10, 20, 10, minute)).toISOString(),
      }),
    );
  };
  // Turns 1-3, then the first commit; turns 4-5, then two commits in a row; turns 6-7 without a commit.
  for (let i = 0; i < 3; i++) {
    await hook("user-prompt-submit", prompts[i]!);
    await hook("stop", stops[i]!);
  }
  cut(commits[0]!, 10);
  for (let i = 3; i < 5; i++) {
    await hook("user-prompt-submit", prompts[i]!);
    await hook("stop", stops[i]!);
  }
  cut(commits[1]!, 30);
  cut(commits[2]!, 40);
  writeTimeline(repo.root, repo.env, { entries, sessions: { [SESSION]: log().join("") } });
});
afterAll(() => (process.env.KEEP ? console.log(repo.root) : repo.cleanup()));

test("list: one session, the real first request, prompts on one line each, the group nested", async () => {
  const r = await runBin(["history", "list"], { cwd: repo.root, env: repo.env });
  expect(r.code).toBe(0);
  const lines = r.stdout.trimEnd().split("\n");
  expect(lines[0]).toStartWith('Session 4f65f198 · "/prime & read /Users/silouane/coorp/');
  expect(lines[0]).toEndWith("· Claude Code · 2026-11-20 10:10–10:40");
  expect(lines[1]).toStartWith(`● ${hashes[0]!.slice(0, 7)}  DOCS  ${messages[0]!.slice(0, 30)}`);
  expect(lines.slice(2, 5).every((l) => l.startsWith('     💬 "'))).toBe(true);
  expect(lines[3]).toStartWith('     💬 "ok start a new folder/files in docs');
  const b = lines.findIndex((l) => l.includes(hashes[1]!.slice(0, 7)));
  const c = lines.findIndex((l) => l.includes(hashes[2]!.slice(0, 7)));
  expect(lines[b]).toStartWith("● ");
  expect(lines[b + 1]).toStartWith('     💬 "<task-notification> <task-id>');
  expect(lines[c]).toStartWith(`  └ ${hashes[2]!.slice(0, 7)}  TEST  ${messages[2]!.slice(0, 30)}`);
  expect(c).toBe(lines.length - 1); // the agent's own second commit carries no prompt
  for (const l of lines) expect(Bun.stringWidth(l)).toBeLessThanOrEqual(100);
});

test("show: the delta turn by turn, with the real assistant text", async () => {
  const r = await runBin(["history", "show", hashes[1]!.slice(0, 8)], { cwd: repo.root, env: repo.env });
  expect(r.code).toBe(0);
  const convo = r.stdout.slice(r.stdout.indexOf("\nConversation\n"));
  expect(convo.match(/^ {2}User$/gm)).toHaveLength(2);
  expect(convo.match(/^ {2}Assistant$/gm)).toHaveLength(2);
  const reply = String(stops[4]!.last_assistant_message).split("\n").find((l) => l.trim())!;
  expect(convo).toContain(`    ${reply}`);
  expect(r.stdout).toContain(`          └ ${hashes[2]!.slice(0, 7)}`);
});

test("grep finds a commit by words from the assistant's reply", async () => {
  const r = await runBin(["history", "list", "--json", "--grep", "adversarial lenses"], { cwd: repo.root, env: repo.env });
  expect((JSON.parse(r.stdout) as { commitHash: string }[]).map((e) => e.commitHash)).toEqual([hashes[1]!]);
});
