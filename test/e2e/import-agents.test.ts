/**
 * `aiflare import` of Cursor's agent transcripts and Factory Droid's sessions (neither client runs here: their
 * files are fixtures, see test/fixtures/agents/{cursor,droid}/SOURCE.md), re-addressed to a temp repository whose
 * commits they made: two commits in one request and one after a new request, grouped as capture groups them.
 */
import { afterEach, describe, expect, test } from "bun:test";
import { mkdirSync, readFileSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { runBin, tempRepo, type TempRepo } from "../helpers.ts";
import { fsckClean, importJson, records, showEntry } from "./capture-support.ts";

const FIXTURES = join(import.meta.dir, "..", "fixtures", "agents");

let repo: TempRepo | undefined;
afterEach(() => {
  repo?.cleanup();
  repo = undefined;
});

/** The three commits the fixtures' sessions made, at the given committer times (ISO, or now). */
function makeCommits(r: TempRepo, times: (string | undefined)[]): string[] {
  const steps = [
    "printf 'export const slug = 1;\\n' > slug.ts && git add slug.ts && git commit -q -m 'Add slugify helper'",
    "printf 'test\\n' > slug.test.ts && git add slug.test.ts && git commit -q -m 'Add slug test'",
    "printf '# slug\\n' >> README.md && git commit -q -am 'Document slugify'",
  ];
  return steps.map((command, i) => {
    const when = times[i];
    const env = when ? { ...r.env, GIT_COMMITTER_DATE: when, GIT_AUTHOR_DATE: when } : r.env;
    expect(Bun.spawnSync(["bash", "-c", command], { cwd: r.root, env }).exitCode).toBe(0);
    return r.git("rev-parse", "HEAD");
  });
}

/** The entries of the three commits: one group for the first request, one for the second, the agent's type. */
function expectGrouped(r: TempRepo, hashes: string[], agentType: string, sessionId: string): void {
  const [a, b, c] = hashes.map((h) => showEntry(r, h)!);
  expect([a, b, c].map((e) => e?.agentType)).toEqual([agentType, agentType, agentType]);
  expect([a, b, c].map((e) => e?.claudeSessionId)).toEqual([sessionId, sessionId, sessionId]);
  expect([a, b, c].map((e) => e?.groupRootId)).toEqual([null, hashes[0], null]);
  expect(a!.summaryStatus).toBe("imported");
  expect(records(a!.conversationSnippet)).toEqual([{ role: "user", content: "Add slugify and its test" }]);
  expect(b!.conversationSnippet).toBe("");
  expect(records(c!.conversationSnippet)).toEqual([
    { role: "assistant", content: "Added slugify and a test." },
    { role: "user", content: "Now document it" },
  ]);
}

describe("import of Factory Droid sessions", () => {
  test("a session of the repository's folder: its commits grouped by request, FACTORY_DROID; again, nothing new", async () => {
    const r = (repo = tempRepo());
    const hashes = makeCommits(r, ["2026-11-20T10:00:06Z", "2026-11-20T10:00:08Z", "2026-11-20T10:01:05Z"]);
    const text = readFileSync(join(FIXTURES, "droid", "session.jsonl"), "utf8").replaceAll("/path/to/repo", r.root);
    const dir = join(r.home, ".factory", "sessions", r.root.replaceAll("/", "-"));
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, "0c6f1f2e-5b7a-4d0e-9a51-6a4d2f7c1b01.jsonl"), text);
    // a sibling folder whose name starts the same: its session is not this repository's, whatever its folder
    const sibling = join(r.home, ".factory", "sessions", `${r.root.replaceAll("/", "-")}-web`);
    mkdirSync(sibling, { recursive: true });
    writeFileSync(join(sibling, "1d7f2f3e-5b7a-4d0e-9a51-6a4d2f7c1b02.jsonl"), text.replaceAll(`"cwd":"${r.root}"`, `"cwd":"${r.root}-web"`));

    expect((await importJson(r, ["--agent", "cursor"])).transcripts).toBe(0);
    const summary = await importJson(r, ["--agent", "droid"]);
    expect(summary.transcripts).toBe(1);
    expect(summary.imported).toBe(3);
    expect(summary.sessions[0].agent).toBe("droid");
    expectGrouped(r, hashes, "FACTORY_DROID", "0c6f1f2e-5b7a-4d0e-9a51-6a4d2f7c1b01");
    const again = await importJson(r, []);
    expect(again.imported).toBe(0);
    expect(again.alreadyRecorded).toBe(3);
    const list = await runBin(["history", "list"], { cwd: r.root, env: r.env });
    expect(list.stdout).toContain("Factory Droid");
    expect(fsckClean(r)).toBe(true);
  });
});

describe("import of Cursor agent transcripts", () => {
  test("a transcript without times: commits matched by their messages up to the file's time, grouped, CURSOR", async () => {
    const r = (repo = tempRepo());
    // an older commit of the same message, before the session: not the session's
    expect(Bun.spawnSync(["bash", "-c", "git commit -q --allow-empty -m 'Document slugify'"], {
      cwd: r.root,
      env: { ...r.env, GIT_COMMITTER_DATE: "2026-01-01T00:00:00Z", GIT_AUTHOR_DATE: "2026-01-01T00:00:00Z" },
    }).exitCode).toBe(0);
    const old = r.git("rev-parse", "HEAD");
    const hashes = makeCommits(r, ["2026-11-20T10:00:06Z", "2026-11-20T10:00:08Z", "2026-11-20T10:01:05Z"]);
    const id = "0d9c6b0e-6a3e-4a4f-9a36-2f6f4d0b7c11";
    const dir = join(r.home, ".cursor", "projects", r.root.replace(/^\/+/, "").replace(/[^A-Za-z0-9]/g, "-"), "agent-transcripts");
    // the IDE's layout, <id>/<id>.jsonl
    mkdirSync(join(dir, id), { recursive: true });
    const path = join(dir, id, `${id}.jsonl`);
    writeFileSync(path, readFileSync(join(FIXTURES, "cursor", "agent-transcript.jsonl")));
    const end = new Date("2026-11-20T10:02:00Z");
    utimesSync(path, end, end);

    const dry = await importJson(r, ["--dry-run", "--agent", "cursor"]);
    expect(dry.sessions.map((s: { sessionId: string }) => s.sessionId)).toEqual([id]);
    expect(dry.sessions[0].commits.map((c: { hash: string }) => c.hash)).toEqual(hashes);
    const summary = await importJson(r, ["--agent", "cursor"]);
    expect(summary.imported).toBe(3);
    expectGrouped(r, hashes, "CURSOR", id);
    expect(showEntry(r, old)).toBeNull();
    expect((await importJson(r, ["--agent", "cursor"])).imported).toBe(0);
  });

  test("a transcript given by path is read as Cursor's, Droid's, Copilot's or Qwen's by its shape", async () => {
    const r = (repo = tempRepo());
    const copilot = join(r.dir, "events.jsonl");
    writeFileSync(copilot, `${JSON.stringify({ type: "session.start", data: { sessionId: "3fc3c28c-a1a2-42ad-b6ca-b597f6b1e6f6", context: { cwd: r.root } }, id: "x", timestamp: "2026-11-20T10:00:00Z" })}\n`);
    const qwen = join(r.dir, "qwen.jsonl");
    writeFileSync(qwen, `${JSON.stringify({ uuid: "u", sessionId: "edab48c3-1b4d-4b7d-84a2-c3433e6d52d6", type: "user", cwd: r.root, message: { role: "user", parts: [{ text: "hi" }] } })}\n`);
    const cursor = join(r.dir, "0d9c6b0e-6a3e-4a4f-9a36-2f6f4d0b7c11.jsonl");
    writeFileSync(cursor, readFileSync(join(FIXTURES, "cursor", "agent-transcript.jsonl")));
    const droid = join(r.dir, "droid.jsonl");
    writeFileSync(droid, readFileSync(join(FIXTURES, "droid", "session.jsonl"), "utf8").replaceAll("/path/to/repo", r.root));
    const summary = await importJson(r, ["--dry-run", copilot, qwen, cursor, droid]);
    expect(summary.transcripts).toBe(4);
    // only sessions with commits or committing commands are listed: Cursor's and Droid's
    expect(summary.sessions.map((s: { agent: string }) => s.agent).sort()).toEqual(["cursor", "droid"]);
  });
});
