/**
 * `aiflare serve` end to end: the compiled binary as the server, its admin commands, the real sync client and the
 * pre-push hook against it, a kill mid-batch, and two server processes on one PostgreSQL.
 */
import { afterEach, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { binary, runBin, tempRepo, testEnv, type TempRepo } from "../helpers.ts";
import { useBackends } from "../server/backends.ts";
import { makeEntry, writeConfig, writeEntries, writeSessions } from "../sync-fixtures.ts";
import { admin, database, newProject, read, useServe } from "./serve-support.ts";
import { agentCommit, session } from "./capture-support.ts";

setDefaultTimeout(90_000);
const BACKENDS = useBackends();
beforeAll(() => {
  binary();
});

const hash = (s: string) => new Bun.CryptoHasher("sha1").update(s).digest("hex");
const { tempDir, serve } = useServe();
const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const c of cleanups.splice(0).reverse()) c();
});


describe("admin commands", () => {
  test("project create prints the key once; list shows counts; key create, list (prefix only) and revoke", async () => {
    const home = tempDir();
    const db = join(home, "db.sqlite");
    const created = await admin(db, ["project", "create", "web-app"], home);
    expect(created.code).toBe(0);
    const key = /\n {2}(afk_\S+)\n/.exec(created.stdout)?.[1]!;
    expect(key.length).toBeGreaterThan(40);
    expect(created.stdout).toContain(`api_key: ${key}`);
    expect((await admin(db, ["project", "create", "web-app"], home)).stderr).toContain("exists already");
    const list = await admin(db, ["project", "list"], home);
    expect(list.stdout).toMatch(/web-app\s+1\s+0\s+-/);
    const second = await admin(db, ["key", "create", "web-app", "--label", "ci runner", "--json"], home);
    const k2 = JSON.parse(second.stdout);
    const keys = await admin(db, ["key", "list"], home);
    expect(keys.stdout).toContain("ci runner");
    expect(keys.stdout).toContain(`${k2.key.slice(0, 12)}…`);
    expect(keys.stdout).not.toContain(k2.key);
    expect(keys.stdout).not.toContain(key);
    const revoked = await admin(db, ["key", "revoke", k2.keyId], home);
    expect(revoked.code).toBe(0);
    expect((await admin(db, ["key", "list", "web-app"], home)).stdout).toMatch(/ci runner\s+\S+\s+revoked/);
    expect((await admin(db, ["key", "revoke", k2.keyId], home)).code).toBe(1);
    expect((await admin(db, ["key", "create", "nope"], home)).stderr).toContain('No project "nope"');
  });

  test("key create --owner: listed, and recorded beside the author the client claims on every entry the key sends", async () => {
    const repo = tempRepo();
    cleanups.push(() => repo.cleanup());
    const db = join(repo.home, "db.sqlite");
    expect((await admin(db, ["project", "create", "web-app"], repo.home)).code).toBe(0);
    const bad = await admin(db, ["key", "create", "web-app", "--owner", "x".repeat(101)], repo.home);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain("owner");
    const made = await admin(db, ["key", "create", "web-app", "--owner", "Alice Martin", "--label", "alice laptop", "--json"], repo.home);
    const key = JSON.parse(made.stdout).key as string;
    expect((await admin(db, ["key", "list"], repo.home)).stdout).toMatch(/Alice Martin\s+alice laptop/);

    // an agent commit captured by the hooks (author: the committer), sent by Alice's key
    const s = session(repo, "sess-owner");
    await s.prompt("add the cache");
    const c = agentCommit(repo, "feat: cache", { "cache.ts": "c" });
    await s.bash("git commit -m 'feat: cache'", c.stdout);
    const server = await serve(db, repo.home);
    writeFileSync(join(repo.root, ".git", "info", "exclude"), "aiflare.yml\n");
    writeConfig(repo.root, server.url, key);
    expect((await runBin(["sync"], { cwd: repo.root, env: repo.env })).code).toBe(0);
    const byAlice = await read(server.url, key, "/api/v1/timeline?author=alice");
    expect(byAlice.entries.map((e: any) => [e.commitHash, e.author, e.keyOwner])).toEqual([[c.hash, "Test Committer <committer@example.com>", "Alice Martin"]]);
    expect((await read(server.url, key, "/api/v1/timeline?author=committer%40example")).entries).toHaveLength(1);
    expect((await read(server.url, key, "/api/v1/timeline?author=bob")).entries).toHaveLength(0);
  });

  test("the default database is a SQLite file under XDG_DATA_HOME, or --data-dir", async () => {
    const home = tempDir();
    const env = { ...testEnv(home), XDG_DATA_HOME: join(home, "xdg") };
    expect((await runBin(["serve", "project", "create", "a"], { cwd: home, env })).code).toBe(0);
    expect(existsSync(join(home, "xdg", "aiflare", "server.sqlite"))).toBe(true);
    expect((await runBin(["serve", "project", "create", "b", "--data-dir", join(home, "d")], { cwd: home, env })).code).toBe(0);
    expect(existsSync(join(home, "d", "server.sqlite"))).toBe(true);
  });
});

for (const backend of BACKENDS) {
  describe(`${backend.name}: the real client against aiflare serve`, () => {
    let repo: TempRepo;
    afterEach(() => repo?.cleanup());

    test("aiflare sync, then git push with the installed pre-push hook; the entries come back through the read API", async () => {
      const db = await database(backend);
      repo = tempRepo();
      const key = await newProject(db, repo.home);
      const server = await serve(db, repo.home);
      const c1 = repo.commit("first change");
      const c2 = repo.commit("second change");
      writeEntries(repo, [
        makeEntry(c1, { claudeSessionId: "sess-e2e", committedAt: "2026-01-01T00:01:00Z", conversationSnippet: '{"role":"user","content":"add the cache"}\n' }),
        makeEntry(c2, { claudeSessionId: "sess-e2e", committedAt: "2026-01-01T00:02:00Z", groupRootId: c1, conversationSnippet: '{"role":"assistant","content":"and its test"}\n' }),
      ]);
      writeSessions(repo, { "sess-e2e": '{"role":"user","content":"add the cache"}\n{"role":"assistant","content":"and its test"}\n' });
      writeFileSync(join(repo.root, ".git", "info", "exclude"), "aiflare.yml\n");
      writeConfig(repo.root, server.url, key);

      const sync = await runBin(["sync"], { cwd: repo.root, env: repo.env });
      expect(sync.stdout).toContain("Sent 2 entries and 1 session");
      expect(sync.code).toBe(0);
      const t = await read(server.url, key, "/api/v1/timeline");
      expect(t.entries.map((e: any) => e.commitHash)).toEqual([c2, c1]);
      expect(t.entries.map((e: any) => e.groupId)).toEqual([c1, c1]);
      expect((await read(server.url, key, "/api/v1/sessions/sess-e2e")).transcript).toContain("add the cache");
      expect((await runBin(["sync"], { cwd: repo.root, env: repo.env })).stdout).toContain("Nothing to send");

      // git push: the hook `aiflare install` writes sends the pushed commit in the background
      const install = await runBin(["install"], { cwd: repo.root, env: repo.env });
      expect(install.code).toBe(0);
      const remote = join(repo.dir, "remote.git");
      repo.git("init", "-q", "--bare", remote);
      repo.git("remote", "add", "origin", remote);
      const c3 = repo.commit("third change");
      writeEntries(repo, [makeEntry(c3, { claudeSessionId: "sess-e2e", title: "Pushed change" })]);
      const push = repo.tryGit("push", "origin", "main");
      expect(push.code).toBe(0);
      let found: any;
      for (let i = 0; i < 200 && !found; i++) {
        found = (await read(server.url, key, "/api/v1/timeline?q=pushed")).entries[0];
        if (!found) await Bun.sleep(100);
      }
      expect(found?.commitHash).toBe(c3);
      // doctor's online check: an empty batch, accepted
      const doctor = await runBin(["doctor", "--online"], { cwd: repo.root, env: repo.env });
      expect(doctor.stdout).toContain(`${server.url} reachable, key accepted (200)`);
      // a bad key: the client reports the 401 and stops
      writeConfig(repo.root, server.url, "afk_not_a_key");
      const bad = await runBin(["sync", "--all"], { cwd: repo.root, env: repo.env });
      expect(bad.code).toBe(1);
      expect(bad.stdout).toContain("refused the API key (401");
      expect(await server.stop()).toBe(0);
      expect(server.output()).toContain("aiflare serve: stopped");
      expect(server.output()).not.toContain(key);
    });

    test("SIGKILL mid-batch loses nothing the server answered 2xx", async () => {
      const db = await database(backend);
      const home = tempDir();
      const key = await newProject(db, home);
      const server = await serve(db, home, ["--rate-limit", "0"]);
      const acked = new Set<string>();
      let killed = false;
      const post = async (n: number) => {
        const entries = Array.from({ length: 100 }, (_, i) => makeEntry(hash(`kill ${n} ${i}`), { conversationSnippet: "x".repeat(2000) }));
        try {
          const r = await fetch(`${server.url}/api/v1/captures/batch`, {
            method: "POST",
            headers: { "content-type": "application/json", "x-api-key": key },
            body: JSON.stringify({ captures: entries }),
          });
          if (r.status === 200) for (const e of entries) acked.add(e.commitHash);
        } catch {
          // the server died mid-request: not acknowledged
        }
      };
      const senders = Array.from({ length: 4 }, async (_, s) => {
        for (let n = 0; !killed && n < 200; n++) await post(s * 1000 + n);
      });
      while (acked.size < 1000) await Bun.sleep(5);
      server.proc.kill("SIGKILL");
      killed = true;
      await Promise.all(senders);
      await server.stop();
      const again = await serve(db, home);
      const stats = await read(again.url, key, "/api/v1/stats?days=3660");
      expect(acked.size).toBeGreaterThanOrEqual(1000);
      expect(stats.entries).toBeGreaterThanOrEqual(acked.size);
      for (const h of [...acked].slice(0, 50)) expect((await fetch(`${again.url}/api/v1/entries/${h}`, { headers: { "x-api-key": key } })).status).toBe(200);
      // a batch is written in short transactions, so a kill may keep part of one; each entry is whole, with its files
      const topFiles = (await read(again.url, key, "/api/v1/stats?days=3660")).topFiles;
      expect(topFiles[0]).toEqual({ path: "src/a.ts", count: stats.entries });
    });
  });
}

describe("sqlite: what the server did not store", () => {
  test("aiflare sync shows the entries the server refused or held a newer capture of, and keeps them pending", async () => {
    const db = await database(BACKENDS.find((b) => b.name === "sqlite")!);
    const repo = tempRepo();
    cleanups.push(() => repo.cleanup());
    const key = await newProject(db, repo.home);
    const server = await serve(db, repo.home);
    const [good, future, older] = [repo.commit("good"), repo.commit("clock ahead"), repo.commit("older capture")];
    writeEntries(repo, [
      makeEntry(good, { title: "Good" }),
      makeEntry(future, { title: "Forged", capturedAt: "2099-01-01T00:00:00.000Z" }),
      makeEntry(older, { title: "Mine", capturedAt: "2026-01-01T00:00:00.000Z" }),
    ]);
    // a teammate's newer capture of the same commit is on the server already
    const newer = new Date().toISOString();
    const put = await fetch(`${server.url}/api/v1/captures`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-api-key": key },
      body: JSON.stringify(makeEntry(older, { title: "Theirs", capturedAt: newer })),
    });
    expect(put.status).toBe(200);
    writeFileSync(join(repo.root, ".git", "info", "exclude"), "aiflare.yml\n");
    writeConfig(repo.root, server.url, key);

    for (let run = 1; run <= 2; run++) {
      const sync = await runBin(["sync"], { cwd: repo.root, env: repo.env });
      expect(sync.code).toBe(1);
      if (run === 1) expect(sync.stdout).toContain("Sent 1 entry");
      else expect(sync.stdout).toContain("Sent 0 entries");
      expect(sync.stdout).toContain(`1 entry (${future.slice(0, 7)}): refused by the backend: capturedAt: 2099-01-01T00:00:00.000Z is more than 5 minutes ahead of the server's clock`);
      expect(sync.stdout).toContain(`1 entry (${older.slice(0, 7)}): not stored: the server holds a newer capture of this commit (captured ${newer})`);
      expect(sync.stdout).toContain("Failed entries stay pending");
    }
    const json = JSON.parse((await runBin(["sync", "--dry-run", "--json"], { cwd: repo.root, env: repo.env })).stdout);
    expect(json.plan.entries.map((e: any) => e.commitHash).sort()).toEqual([future, older].sort());
    expect((await read(server.url, key, `/api/v1/entries/${older}`)).entry.title).toBe("Theirs");
    expect((await read(server.url, key, `/api/v1/entries/${future}`)).error).toContain("no entry");
  });
});

describe("shutdown", () => {
  test("SIGTERM while a batch is still arriving: the batch is answered and stored, then the server exits 0", async () => {
    const home = tempDir();
    const db = join(home, "db.sqlite");
    const key = await newProject(db, home);
    const server = await serve(db, home);
    const c = hash("in flight");
    const body = JSON.stringify({ captures: [makeEntry(c)] });
    let push!: (chunk: string | null) => void;
    const stream = new ReadableStream<Uint8Array>({
      start(controller) {
        push = (chunk) => (chunk === null ? controller.close() : controller.enqueue(new TextEncoder().encode(chunk)));
      },
    });
    const answer = fetch(`${server.url}/api/v1/captures/batch`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-api-key": key },
      body: stream,
      duplex: "half",
    } as RequestInit);
    push(body.slice(0, 100));
    await Bun.sleep(300);
    server.proc.kill("SIGTERM");
    await Bun.sleep(300);
    push(body.slice(100));
    push(null);
    expect((await answer).status).toBe(200);
    expect(await server.proc.exited).toBe(0);
    await server.stop();
    expect(server.output()).toContain("SIGTERM: finishing requests in flight");
    const again = await serve(db, home);
    expect((await read(again.url, key, `/api/v1/entries/${c}`)).entry.commitHash).toBe(c);
  });
});

describe("postgres: two server processes on one database", () => {
  test("clients writing to both at once: every entry stored once; a key revoked through one fails on both", async () => {
    const db = await database(BACKENDS.find((b) => b.name === "postgres")!);
    const home = tempDir();
    const key = await newProject(db, home);
    const [a, b] = await Promise.all([serve(db, home, ["--rate-limit", "0"]), serve(db, home, ["--rate-limit", "0"])]);
    const all = new Set<string>();
    await Promise.all(
      Array.from({ length: 6 }, async (_, c) => {
        for (let n = 0; n < 5; n++) {
          // each batch goes to both servers at once, half shared with the next client
          const entries = Array.from({ length: 100 }, (_, i) => makeEntry(hash(i < 50 ? `${c} ${n} ${i}` : `${(c + 1) % 6} ${n} ${i - 50}`), { claudeSessionId: `c${c}` }));
          for (const e of entries) all.add(e.commitHash);
          const body = JSON.stringify({ captures: entries });
          const rs = await Promise.all(
            [a, b].map((s) => fetch(`${s.url}/api/v1/captures/batch`, { method: "POST", headers: { "content-type": "application/json", "x-api-key": key }, body })),
          );
          expect(rs.map((r) => r.status)).toEqual([200, 200]);
        }
      }),
    );
    expect((await read(a.url, key, "/api/v1/stats?days=3660")).entries).toBe(all.size);
    expect((await read(b.url, key, "/api/v1/stats?days=3660")).entries).toBe(all.size);
    const list = JSON.parse((await admin(db, ["key", "list", "--json"], home)).stdout);
    expect((await admin(db, ["key", "revoke", list[0].id], home)).code).toBe(0);
    for (const s of [a, b]) expect((await fetch(`${s.url}/api/v1/stats`, { headers: { "x-api-key": key } })).status).toBe(401);
  });
});
