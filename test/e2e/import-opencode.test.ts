/**
 * `aiflare import` of OpenCode sessions from its SQLite database (`$XDG_DATA_HOME/opencode/opencode.db`), written in
 * the shape OpenCode 1.18.33 writes them: `session`, `message` and `part` rows with JSON `data`, a subagent's child
 * session (`parent_id`).
 */
import { Database } from "bun:sqlite";
import { afterEach, describe, expect, test } from "bun:test";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { runBin, tempRepo, type TempRepo } from "../helpers.ts";
import { records, showEntry } from "./capture-support.ts";

let repo: TempRepo | undefined;
afterEach(() => {
  repo?.cleanup();
  repo = undefined;
});

/** Runs `git` through bash at a given time, as OpenCode's bash tool would have. */
function commitAt(r: TempRepo, command: string, ms: number): string {
  const when = new Date(ms).toISOString();
  const made = Bun.spawnSync(["bash", "-c", command], { cwd: r.root, env: { ...r.env, GIT_COMMITTER_DATE: when, GIT_AUTHOR_DATE: when } });
  expect(made.exitCode).toBe(0);
  return r.git("rev-parse", "HEAD");
}

function database(r: TempRepo): Database {
  const dir = join(r.home, ".local", "share", "opencode");
  mkdirSync(dir, { recursive: true });
  const db = new Database(join(dir, "opencode.db"));
  db.run("CREATE TABLE session (id text PRIMARY KEY, project_id text NOT NULL, parent_id text, slug text NOT NULL, directory text NOT NULL, title text NOT NULL, version text NOT NULL, time_created integer NOT NULL, time_updated integer NOT NULL)");
  db.run("CREATE TABLE message (id text PRIMARY KEY, session_id text NOT NULL, time_created integer NOT NULL, time_updated integer NOT NULL, data text NOT NULL)");
  db.run("CREATE TABLE part (id text PRIMARY KEY, message_id text NOT NULL, session_id text NOT NULL, time_created integer NOT NULL, time_updated integer NOT NULL, data text NOT NULL)");
  return db;
}

describe("import of OpenCode sessions", () => {
  test("a top session of the repository and its subagent's session: OPENCODE entries, the user's prompts only, grouped by request", async () => {
    const r = (repo = tempRepo());
    const t0 = Date.now() - 60_000;
    const addCmd = "echo a > a.txt && git add a.txt && git commit -q -m 'Add a'";
    const docCmd = "echo '# A' > A.md && git add A.md && git commit -q -m 'Document a'";
    const add = commitAt(r, addCmd, t0 + 3000);
    const doc = commitAt(r, docCmd, t0 + 9000);
    const db = database(r);
    const session = (id: string, parent: string | null, directory: string) =>
      db.run("INSERT INTO session VALUES (?, 'p', ?, 's', ?, 't', '1.18.33', ?, ?)", [id, parent, directory, t0, t0 + 10_000]);
    const message = (id: string, sid: string, role: string, at: number) =>
      db.run("INSERT INTO message VALUES (?, ?, ?, ?, ?)", [id, sid, t0 + at, t0 + at, JSON.stringify({ role })]);
    let n = 0;
    const part = (mid: string, sid: string, at: number, data: unknown) =>
      db.run("INSERT INTO part VALUES (?, ?, ?, ?, ?, ?)", [`prt_${String(++n).padStart(4, "0")}`, mid, sid, t0 + at, t0 + at, JSON.stringify(data)]);
    const bash = (command: string, start: number) => ({
      type: "tool",
      tool: "bash",
      callID: `call_${start}`,
      state: { status: "completed", input: { command, description: "Run a command" }, output: "(no output)", metadata: { exit: 0 }, time: { start: t0 + start, end: t0 + start + 500 } },
    });
    const top = "ses_top00000000000000000001";
    const child = "ses_child0000000000000000001";
    session(top, null, r.root);
    session(child, top, r.root);
    // another folder's session is not this repository's
    session("ses_other0000000000000000001", null, join(r.dir, "elsewhere"));
    message("msg_1", top, "user", 1000);
    part("msg_1", top, 1000, { type: "text", text: "Add a please" });
    part("msg_1", top, 1001, { type: "text", text: "<file contents>", synthetic: true });
    message("msg_2", top, "assistant", 2000);
    part("msg_2", top, 2500, bash(addCmd, 2500));
    message("msg_3", top, "assistant", 4000);
    part("msg_3", top, 4000, { type: "text", text: "Added a." });
    message("msg_4", top, "user", 6000);
    part("msg_4", top, 6000, { type: "text", text: "Now document it" });
    message("msg_5", top, "assistant", 7000);
    part("msg_5", top, 7000, { type: "tool", tool: "task", callID: "call_task", state: { status: "completed", input: { prompt: "Write A.md" } } });
    message("msg_6", child, "user", 7500);
    part("msg_6", child, 7500, { type: "text", text: "Write A.md and commit it" });
    message("msg_7", child, "assistant", 8000);
    part("msg_7", child, 8500, bash(docCmd, 8500));
    part("msg_7", child, 9500, { type: "text", text: "A.md committed." });
    db.close();

    const out = await runBin(["import", "--agent", "opencode", "--json"], { cwd: r.root, env: r.env });
    expect(out.code).toBe(0);
    const summary = JSON.parse(out.stdout);
    expect(summary.sessions.map((s: { sessionId: string; agent: string }) => [s.sessionId, s.agent])).toEqual([[top, "opencode"]]);
    expect(summary.imported).toBe(2);
    const ea = showEntry(r, add)!;
    const ed = showEntry(r, doc)!;
    expect([ea.agentType, ea.claudeSessionId, ea.summaryStatus, ea.groupRootId ?? null]).toEqual(["OPENCODE", top, "imported", null]);
    expect(records(ea.conversationSnippet)).toEqual([{ role: "user", content: "Add a please" }]);
    expect([ed.agentType, ed.claudeSessionId, ed.groupRootId ?? null]).toEqual(["OPENCODE", top, null]);
    expect(records(ed.conversationSnippet)).toEqual([
      { role: "assistant", content: "Added a." },
      { role: "user", content: "Now document it" },
    ]);
  });

  test("no database: nothing found, no error", async () => {
    const r = (repo = tempRepo());
    const out = await runBin(["import", "--agent", "opencode", "--json"], { cwd: r.root, env: r.env });
    expect(out.code).toBe(0);
    expect(JSON.parse(out.stdout).transcripts).toBe(0);
  });
});
