/** What sync sent is remembered per backend and project: a new backend gets everything it lacks. */
import { Database } from "bun:sqlite";
import { afterEach, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { binary, runBin, tempRepo, type TempRepo } from "../helpers.ts";
import { makeEntry, startBackend, writeEntries, writeSessions, type Backend } from "../sync-fixtures.ts";

setDefaultTimeout(60_000);
const KEY_A = "ak_live_projectA_0123456789abcdefWXYZ";
const KEY_B = "ak_live_projectB_0123456789abcdefQRST";

let repo: TempRepo;
const backends: Backend[] = [];
beforeAll(() => {
  binary();
});
afterEach(() => {
  for (const b of backends.splice(0)) b.stop();
  repo?.cleanup();
});

function setup() {
  repo = tempRepo();
  const commits = [repo.commit("first change"), repo.commit("second change")];
  writeEntries(repo, commits.map((c) => makeEntry(c, { claudeSessionId: "sess-a" })));
  writeSessions(repo, { "sess-a": `${JSON.stringify({ role: "user", content: "make it so" })}\n` });
  const [one, two] = [startBackend(), startBackend()];
  backends.push(one, two);
  return { commits, one, two };
}

const sync = (endpoint: string, key: string, ...args: string[]) =>
  runBin(["sync", ...args], { cwd: repo.root, env: { ...repo.env, AIFLARE_ENDPOINT: endpoint, AIFLARE_API_KEY: key } });
const sent = (b: Backend) => ({ entries: b.captures().length, sessions: b.sessions().length });

describe("sync state per backend and project", () => {
  test("a new, empty backend gets everything; each backend only what it lacks; --status per backend", async () => {
    const { commits, one, two } = setup();
    expect((await sync(one.url, KEY_A)).stdout).toContain("Sent 2 entries and 1 session");
    expect(sent(one)).toEqual({ entries: 2, sessions: 1 });

    // another server: it has nothing yet
    const first = await sync(`${two.url}/`, KEY_A);
    expect(first.stdout).not.toContain("Nothing to send");
    expect(sent(two)).toEqual({ entries: 2, sessions: 1 });
    expect((await sync(two.url, KEY_A)).stdout).toContain("Nothing to send");
    expect((await sync(one.url, KEY_A)).stdout).toContain("Nothing to send");

    // the same server, another project's key
    await sync(one.url, KEY_B);
    expect(sent(one)).toEqual({ entries: 4, sessions: 2 });

    // a third commit: pending for every backend until each has it
    const c3 = repo.commit("third change");
    writeEntries(repo, [makeEntry(c3, { claudeSessionId: "sess-b" })]);
    await sync(two.url, KEY_A);
    const status = await sync(one.url, KEY_A, "--status", "--json");
    expect(status.code).toBe(0);
    const report = JSON.parse(status.stdout) as { targets: { endpoint: string; project: string; pendingEntries: number; current: boolean; lastSuccessAt: string | null }[] };
    const byKey = (url: string, n: number) => report.targets.filter((t) => t.endpoint === url)[n]!;
    expect(report.targets).toHaveLength(3);
    expect(report.targets.filter((t) => t.current).map((t) => [t.endpoint, t.pendingEntries])).toEqual([[one.url, 1]]);
    expect(report.targets.find((t) => t.endpoint === two.url)).toMatchObject({ pendingEntries: 0 });
    for (const t of report.targets) expect(t.lastSuccessAt).toMatch(/^\d{4}-\d\d-\d\dT/);
    expect(byKey(one.url, 0).project).not.toBe(byKey(one.url, 1).project);
    const text = await sync(one.url, KEY_A, "--status");
    expect(text.stdout).toContain(`${one.url} (project key-sha256:`);
    expect(text.stdout).toContain("pending: 1 entry, 0 sessions");
    expect(text.stdout).toContain("configured now");
    // the keys are never kept or shown: only a hash names the project
    const index = readFileSync(join(repo.root, ".git", "aiflare", "index.sqlite"));
    for (const key of [KEY_A, KEY_B]) {
      expect(index.includes(key)).toBe(false);
      expect(status.stdout + text.stdout).not.toContain(key);
    }
    expect(commits).toHaveLength(2);
  });

  test("state kept before it was per backend goes to the backend configured at the first sync after the upgrade", async () => {
    const { one, two } = setup();
    await sync(one.url, KEY_A);
    expect(sent(one)).toEqual({ entries: 2, sessions: 1 });
    // the index as the previous version left it: one set of sync tables, no backend named
    const path = join(repo.root, ".git", "aiflare", "index.sqlite");
    const db = new Database(path);
    db.run("CREATE TABLE old_entries AS SELECT commit_hash, accepted_at, accepted_hash, last_error, attempts FROM sync_entries");
    db.run("CREATE TABLE old_sessions AS SELECT session_id, accepted_at, accepted_hash, last_error, attempts FROM sync_sessions");
    db.run("DROP TABLE sync_entries");
    db.run("DROP TABLE sync_sessions");
    db.run("DROP TABLE sync_targets");
    db.run("ALTER TABLE old_entries RENAME TO sync_entries");
    db.run("ALTER TABLE old_sessions RENAME TO sync_sessions");
    db.run("PRAGMA user_version = 8");
    db.close();
    // the backend configured now is taken to have what was sent before
    expect((await sync(one.url, KEY_A)).stdout).toContain("Nothing to send");
    expect(sent(one)).toEqual({ entries: 2, sessions: 1 });
    // any other starts from nothing
    await sync(two.url, KEY_A);
    expect(sent(two)).toEqual({ entries: 2, sessions: 1 });
  });
});
