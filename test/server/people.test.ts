/**
 * Who sent what (SPEC §4, §10): the author an entry claims and the owner of the key that sent it, stored side by
 * side, answered and filtered by the read API; and migration 3, which adds them to a database made by the earlier migrations.
 * Run against SQLite and a real PostgreSQL.
 */
import { Database } from "bun:sqlite";
import { SQL as BunSQL } from "bun";
import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { createKey } from "../../src/server/admin.ts";
import { MIGRATIONS as PG_MIGRATIONS } from "../../src/server/postgres/schema.ts";
import { MIGRATIONS as SQLITE_MIGRATIONS } from "../../src/server/sqlite/schema.ts";
import { makeEntry } from "../sync-fixtures.ts";
import { hash, serverPerTest, useBackends, type Backend, type TestServer } from "./backends.ts";

// a PostgreSQL cluster starts in the first hook: on a busy machine initdb alone takes seconds
setDefaultTimeout(120_000);
const BACKENDS = useBackends();
const server = serverPerTest();
let srv: TestServer | undefined;

async function call(path: string, key: string, body?: unknown) {
  const res = await fetch(`${srv!.url}${path}`, {
    method: body === undefined ? "GET" : "POST",
    headers: { "content-type": "application/json", "x-api-key": key },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, json: (await res.json()) as any };
}

/** Applies only the first migration, as a server of the previous version left the database, with one entry in it. */
async function firstVersionDatabase(backend: Backend, url: string, summary: string): Promise<void> {
  const rows = [
    ["prj_1", "demo", "2026-01-01T00:00:00.000Z"],
    ["key_1", "prj_1", "h1", "ak_1", "laptop", "2026-01-01T00:00:00.000Z"],
  ];
  if (backend.name === "sqlite") {
    const db = new Database(url, { create: true });
    db.exec(SQLITE_MIGRATIONS[0]!);
    db.exec("CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, applied_at TEXT NOT NULL)");
    db.run("INSERT INTO schema_migrations VALUES (1, '2026-01-01')");
    db.run("INSERT INTO projects VALUES (?, ?, ?)", rows[0]!);
    db.run("INSERT INTO api_keys (id, project_id, hash, prefix, label, created_at) VALUES (?, ?, ?, ?, ?, ?)", rows[1]!);
    db.run(
      `INSERT INTO entries (project_id, commit_hash, session_id, branch, tag, captured_ms, sort_ms, group_id, group_auto,
        has_user, continuation, summary, conversation) VALUES ('prj_1', ?, 's', 'main', 'FEATURE', 1, 1, ?, 0, 0, 0, ?, '')`,
      [hash("old"), hash("old"), summary],
    );
    db.close();
    return;
  }
  const sql = new BunSQL(url, { max: 1 });
  try {
    await sql.unsafe(PG_MIGRATIONS[0]!);
    await sql.unsafe("CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, applied_at TIMESTAMPTZ NOT NULL DEFAULT now())");
    await sql.unsafe("INSERT INTO schema_migrations (version) VALUES (1)");
    await sql.unsafe("INSERT INTO projects (id, name) VALUES ($1, $2)", rows[0]!.slice(0, 2));
    await sql.unsafe("INSERT INTO api_keys (id, project_id, hash, prefix, label) VALUES ($1, $2, $3, $4, $5)", rows[1]!.slice(0, 5));
    await sql.unsafe(
      `INSERT INTO entries (project_id, commit_hash, session_id, branch, tag, captured_ms, sort_ms, group_id, group_auto,
        has_user, continuation, summary, conversation, search) VALUES ('prj_1', $1, 's', 'main', 'FEATURE', 1, 1, $1, false, false, false, $2, '', ''::tsvector)`,
      [hash("old"), summary],
    );
  } finally {
    await sql.close();
  }
}

for (const backend of BACKENDS) {
  describe(`${backend.name}: the author an entry claims and the owner of the key that sent it`, () => {
    test("both are stored and answered; a keyOwner sent by the client is ignored; the author filter matches either", async () => {
      srv = await server.start(backend);
      const alice = await createKey(srv.storage, "demo", "alice laptop", "Alice Martin");
      const own = hash("own");
      const claimed = hash("claimed");
      const forged = hash("forged");
      const plain = hash("plain");
      const sent = await call("/api/v1/captures/batch", alice.key, {
        captures: [
          makeEntry(own, { author: "Alice Martin <alice@example.com>", claudeSessionId: "s-alice" }),
          // Alice's key sends an entry that says Bob made it: both are kept, neither replaces the other
          makeEntry(claimed, { author: "Bob Stone <bob@corp.example>", claudeSessionId: "s-bob" }),
          { ...makeEntry(forged, { author: "Carol <carol@example.com>", claudeSessionId: "s-carol" }), keyOwner: "Mallory" },
        ],
      });
      expect(sent.status).toBe(200);
      // the project's first key has no owner: the server vouches for nobody
      expect((await call("/api/v1/captures", srv.key, makeEntry(plain, { claudeSessionId: "s-plain" }))).status).toBe(200);

      const entry = async (h: string) => (await call(`/api/v1/entries/${h}`, srv!.key)).json.entry;
      expect(await entry(own)).toMatchObject({ author: "Alice Martin <alice@example.com>", keyOwner: "Alice Martin" });
      expect(await entry(claimed)).toMatchObject({ author: "Bob Stone <bob@corp.example>", keyOwner: "Alice Martin" });
      expect((await entry(forged)).keyOwner).toBe("Alice Martin");
      const anonymous = await entry(plain);
      expect(anonymous.author).toBeUndefined();
      expect(anonymous.keyOwner).toBeUndefined();

      const page = (await call("/api/v1/timeline", srv.key)).json.entries as any[];
      expect(page.find((e) => e.commitHash === claimed)).toMatchObject({ author: "Bob Stone <bob@corp.example>", keyOwner: "Alice Martin" });

      const ids = async (who: string) =>
        ((await call(`/api/v1/timeline?author=${encodeURIComponent(who)}`, srv!.key)).json.entries as any[]).map((e) => e.commitHash).sort();
      expect(await ids("alice")).toEqual([own, claimed, forged].sort());
      expect(await ids("BOB@corp")).toEqual([claimed]);
      expect(await ids("carol")).toEqual([forged]);
      expect(await ids("mallory")).toEqual([]);
      expect(await ids("first key")).toEqual([]);
      // LIKE's wildcards are plain characters
      expect(await ids("%")).toEqual([]);
      expect(await ids("_")).toEqual([]);

      const keys = await srv.storage.keys();
      expect(keys.find((k) => k.id === alice.keyId)).toMatchObject({ owner: "Alice Martin", label: "alice laptop" });
    });

    test("migration 3 adds the owner and author columns to a database of the first version, keeping its entries", async () => {
      const db = await backend.fresh();
      const old = hash("old");
      const summary = JSON.stringify({ ...makeEntry(old, { author: "Dana <dana@example.com>" }), conversationSnippet: undefined, groupRootId: undefined });
      await firstVersionDatabase(backend, db.url, summary);
      const storage = await db.open();
      try {
        const timeline = await storage.timeline("prj_1", { limit: 10, author: "dana" });
        expect(timeline.map((e) => e.commitHash)).toEqual([old]);
        expect(await storage.timeline("prj_1", { limit: 10, author: "laptop" })).toEqual([]);
        const [key] = await storage.keys();
        expect(key).toMatchObject({ id: "key_1", owner: "", label: "laptop" });
        // migrating again changes nothing
        await storage.migrate();
        expect((await storage.timeline("prj_1", { limit: 10 })).length).toBe(1);
      } finally {
        await storage.close();
      }
    });
  });
}
