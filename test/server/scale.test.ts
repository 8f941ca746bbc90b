/**
 * The read paths that keep the team server fast at a million entries, against SQLite and a real PostgreSQL: a file
 * filter that walks its path in the one order, a text search that finds rare words through the full-text index and
 * common ones among the newest entries, and stats from per-day counts kept as entries are written — each answering
 * exactly what a walk over every entry would.
 */
import { afterEach, describe, expect, test } from "bun:test";
import { startServer } from "../../src/server/serve.ts";
import type { Entry } from "../../src/store/entry.ts";
import { makeEntry } from "../sync-fixtures.ts";
import { hash, testServer, useBackends } from "./backends.ts";

const BACKENDS = useBackends();
const DAY = 86_400_000;

type Srv = Awaited<ReturnType<typeof testServer>>;
let srv: Srv | undefined;
const extra: { stop(): Promise<void> }[] = [];
afterEach(async () => {
  for (const x of extra.splice(0)) await x.stop();
  await srv?.stop();
  srv = undefined;
});

async function send(url: string, key: string, captures: unknown[]) {
  const r = await fetch(`${url}/api/v1/captures/batch`, { method: "POST", headers: { "content-type": "application/json", "x-api-key": key }, body: JSON.stringify({ captures }) });
  if (r.status !== 200) throw new Error(`batch answered ${r.status}: ${await r.text()}`);
}
async function get(path: string): Promise<any> {
  const r = await fetch(`${srv!.url}${path}`, { headers: { "x-api-key": srv!.key } });
  if (r.status !== 200) throw new Error(`${path} answered ${r.status}: ${await r.text()}`);
  return r.json();
}

/** Every entry of a filtered timeline, page by page through the cursors. */
async function allPages(query: string, limit: number): Promise<string[]> {
  const out: string[] = [];
  let cursor = "";
  for (let i = 0; i < 1000; i++) {
    const page = await get(`/api/v1/timeline?limit=${limit}&${query}${cursor ? `&cursor=${cursor}` : ""}`);
    out.push(...page.entries.map((e: any) => e.commitHash));
    if (!page.nextCursor) return out;
    cursor = page.nextCursor;
  }
  throw new Error("no end of pages");
}

/** The one order, newest first: committedAt, then recordedAt, then the commit hash. */
function newestFirst(entries: Entry[]): string[] {
  const key = (e: Entry) => [Date.parse(e.committedAt ?? e.capturedAt), Date.parse(e.recordedAt ?? e.capturedAt), e.commitHash] as const;
  return [...entries]
    .sort((a, b) => {
      const [x, y] = [key(a), key(b)];
      return y[0] - x[0] || y[1] - x[1] || (y[2] < x[2] ? -1 : y[2] > x[2] ? 1 : 0);
    })
    .map((e) => e.commitHash);
}

/** The stats a count over every entry gives, for a window starting at `sinceMs`. */
function expectedStats(entries: Entry[], sinceMs: number) {
  const inWindow = entries.filter((e) => Date.parse(e.committedAt ?? e.capturedAt) >= sinceMs);
  const perTag: Record<string, number> = {};
  const files = new Map<string, number>();
  for (const e of inWindow) {
    perTag[e.tag ?? "UNTAGGED"] = (perTag[e.tag ?? "UNTAGGED"] ?? 0) + 1;
    for (const f of new Set(e.changedFiles)) files.set(f, (files.get(f) ?? 0) + 1);
  }
  const topFiles = [...files].map(([path, count]) => ({ path, count })).sort((a, b) => b.count - a.count || (a.path < b.path ? -1 : 1)).slice(0, 10);
  return { entries: inWindow.length, sessions: new Set(inWindow.map((e) => e.claudeSessionId)).size, perTag, topFiles };
}

for (const backend of BACKENDS) {
  describe(`${backend.name}: reads at scale`, () => {
    test("file filter: a folder, a file and a name that only starts like a folder, in pages across commits of one second; re-sent entries take their new files and time", async () => {
      srv = await testServer(backend);
      const base = Date.UTC(2026, 2, 1);
      const files = [["src/core/a.ts"], ["src/core/deep/b.ts", "README.md"], ["src/core2/c.ts"], ["src/core/a.ts", "src/core2/c.ts"], ["docs/x.md"]];
      // 40 commits, four to a second: their order rests on recordedAt and then on the hash
      let entries = Array.from({ length: 40 }, (_, i) => {
        const at = new Date(base + Math.floor(i / 4) * 1000).toISOString();
        return makeEntry(hash(`file ${i}`), {
          changedFiles: files[i % files.length]!,
          committedAt: at,
          capturedAt: at,
          recordedAt: new Date(base + Math.floor(i / 4) * 1000 + (i % 2) * 5).toISOString(),
          claudeSessionId: `s-${i % 3}`,
        });
      });
      await send(srv.url, srv.key, entries);
      const under = (dir: string) => newestFirst(entries.filter((e) => e.changedFiles.some((f) => f === dir || f.startsWith(`${dir}/`))));
      for (const path of ["src/core", "src/core/a.ts", "src/core2", "src", "src/co", "src/core/deep"]) {
        expect(await allPages(`file=${path}`, 3)).toEqual(under(path));
      }
      // the root: every entry with files
      expect(await allPages("file=/", 7)).toEqual(newestFirst(entries));
      expect((await get("/api/v1/files?path=src/core/deep/")).entries.map((e: any) => e.commitHash)).toEqual(under("src/core/deep"));
      // with other filters and a cursor together
      const tagged = newestFirst(entries.filter((e) => e.claudeSessionId === "s-1" && e.changedFiles.some((f) => f.startsWith("src/core/"))));
      expect(await allPages("file=src/core&session=s-1", 2)).toEqual(tagged);

      // a newer capture of five entries: other files, another time
      const later = new Date(base + 3600_000).toISOString();
      const moved = entries.slice(0, 5).map((e, k) => ({ ...e, changedFiles: [`lib/moved${k}.ts`], committedAt: later, capturedAt: later, recordedAt: later }));
      await send(srv.url, srv.key, moved);
      entries = [...moved, ...entries.slice(5)];
      for (const path of ["src/core", "lib", "lib/moved3.ts", "src"]) expect(await allPages(`file=${path}`, 4)).toEqual(under(path));
      expect((await get("/api/v1/timeline?limit=1&file=lib")).entries[0].commitHash).toBe(newestFirst(moved)[0]);
    });

    test("text search: a rare word deep in a long history and a common word, page by page, as a walk over every entry finds them", async () => {
      srv = await testServer(backend);
      const base = Date.UTC(2026, 3, 1);
      const entries = Array.from({ length: 1_250 }, (_, i) => {
        const at = new Date(base + Math.floor(i / 2) * 60_000).toISOString();
        const rare = i === 3 || i === 17 || i === 400 ? " the zanzibarquux refactor" : "";
        return makeEntry(hash(`search ${i}`), {
          title: `Change ${i}: common ground${rare}`,
          tag: i % 2 ? "BUGFIX" : "FEATURE",
          committedAt: at,
          capturedAt: at,
          recordedAt: at,
          conversationSnippet: `${JSON.stringify({ role: "user", content: `step ${i} ${i % 50 === 0 ? "quarterly" : ""}` })}\n`,
        });
      });
      for (let i = 0; i < entries.length; i += 100) await send(srv.url, srv.key, entries.slice(i, i + 100));
      const having = (f: (e: Entry, i: number) => boolean) => newestFirst(entries.filter(f));
      // three matches, all older than the newest entries a search looks at first
      expect(await allPages("q=zanzibar", 2)).toEqual(having((_, i) => i === 3 || i === 17 || i === 400));
      expect(await allPages("q=zanzibarquux%20refactor&tag=BUGFIX", 2)).toEqual(having((_, i) => i === 3 || i === 17));
      // one match in fifty: fewer than a page among the newest entries a search looks at first
      expect(await allPages("q=quarterly", 10)).toEqual(having((_, i) => i % 50 === 0));
      // in every entry: the newest ones
      const common = await get("/api/v1/timeline?limit=50&q=common%20grou");
      expect(common.entries.map((e: any) => e.commitHash)).toEqual(having(() => true).slice(0, 50));
      const second = await get(`/api/v1/timeline?limit=50&q=common&cursor=${common.nextCursor}`);
      expect(second.entries.map((e: any) => e.commitHash)).toEqual(having(() => true).slice(50, 100));
      expect((await get("/api/v1/timeline?limit=50&q=nosuchwordanywhere")).entries).toEqual([]);
    });

    test("stats: batches sent at once to two servers, sent twice, and re-sent with another day, tag, session and files are each counted once", async () => {
      srv = await testServer(backend);
      const other = await startServer({ host: "127.0.0.1", port: 0, storage: await srv.db.open(), rateLimit: 0, log: () => {} });
      extra.push({ stop: () => other.stop(true) });
      const today = Date.UTC(new Date().getUTCFullYear(), new Date().getUTCMonth(), new Date().getUTCDate());
      const tags = ["FEATURE", "BUGFIX", "TEST", "DOCS"] as const;
      let entries = Array.from({ length: 240 }, (_, i) => {
        // from 120 days ago to today, two to a day (at 00:00 and 00:01, never more than the server's 5 minutes of
        // allowed skew ahead of it, whatever the hour the test runs): across several blocks of days
        const at = new Date(today - Math.floor(i / 2) * DAY + (i % 2) * 60_000).toISOString();
        return makeEntry(hash(`stats ${i}`), {
          tag: tags[i % 4],
          claudeSessionId: `sess-${Math.floor(i / 5)}`,
          changedFiles: [`src/f${i % 13}.ts`, ...(i % 3 ? [] : ["README.md"])],
          committedAt: at,
          capturedAt: at,
        });
      });
      // eight clients, every batch sent to both servers at once
      await Promise.all(
        Array.from({ length: 8 }, async (_, c) => {
          for (let b = c * 30; b < c * 30 + 30; b += 10) {
            const chunk = entries.slice(b, b + 10);
            await Promise.all([send(srv!.url, srv!.key, chunk), send(other.url, srv!.key, chunk)]);
          }
        }),
      );
      const check = async () => {
        for (const days of [7, 28, 90, 365]) {
          const s = await get(`/api/v1/stats?days=${days}`);
          const want = expectedStats(entries, today - (days - 1) * DAY);
          expect({ entries: s.entries, sessions: s.sessions, perTag: s.perTag, topFiles: s.topFiles }).toEqual(want);
          expect(s.perDay.reduce((n: number, d: any) => n + d.count, 0)).toBe(want.entries);
        }
      };
      await check();
      // newer captures of 60 entries: half to another day, other tags, sessions and files; sent at once, twice
      const newer = entries.slice(100, 160).map((e, k) => {
        const at = k % 2 ? new Date(today - 2 * DAY + k * 1000).toISOString() : e.committedAt;
        return { ...e, capturedAt: new Date(Date.parse(e.capturedAt) + 1000).toISOString(), committedAt: at, tag: "REFACTORING" as const, claudeSessionId: `moved-${k % 4}`, changedFiles: [`lib/new${k % 3}.ts`] };
      });
      await Promise.all([0, 1, 2, 3].map((c) => send(c % 2 ? other.url : srv!.url, srv!.key, newer.slice((c % 2) * 30, (c % 2) * 30 + 30))));
      entries = entries.map((e) => newer.find((n) => n.commitHash === e.commitHash) ?? e);
      await check();
      const day = (await get("/api/v1/stats?days=3")).perDay.find((d: any) => d.day === new Date(today - 2 * DAY).toISOString().slice(0, 10));
      expect(day.count).toBe(entries.filter((e) => (e.committedAt ?? "").startsWith(new Date(today - 2 * DAY).toISOString().slice(0, 10))).length);
    });

    if (backend.name === "postgres") {
      test("the search vector is stored compressed with lz4 (pglz leaves it whole)", async () => {
        srv = await testServer(backend);
        await send(srv.url, srv.key, Array.from({ length: 3 }, (_, i) => makeEntry(hash(`lz4 ${i}`), { title: `word${i} `.repeat(2) + Array.from({ length: 600 }, (_, k) => `w${i}x${k * 7919}`).join(" ") })));
        const sql = new Bun.SQL(srv.db.url);
        try {
          const [lz4] = await sql.unsafe("SELECT count(*)::int AS n FROM pg_attribute WHERE attrelid = 'entries'::regclass AND attname = 'search' AND attcompression = 'l'");
          const methods = await sql.unsafe("SELECT DISTINCT pg_column_compression(search) AS m FROM entries");
          const supported = (await sql.unsafe("SELECT 1 FROM pg_settings WHERE name = 'default_toast_compression' AND 'lz4' = ANY(enumvals)")).length > 0;
          expect({ column: lz4.n, stored: methods.map((r: any) => r.m) }).toEqual(supported ? { column: 1, stored: ["lz4"] } : { column: 0, stored: [null] });
        } finally {
          await sql.close();
        }
      });

      test("a database from before migration 6 gets its paths and day counts from the stored entries when it migrates", async () => {
        srv = await testServer(backend);
        const today = Date.UTC(new Date().getUTCFullYear(), new Date().getUTCMonth(), new Date().getUTCDate());
        const entries = Array.from({ length: 30 }, (_, i) => {
          const at = new Date(today - (i % 9) * 5 * DAY + i * 1000).toISOString();
          return makeEntry(hash(`old ${i}`), { changedFiles: [`src/m${i % 4}/f.ts`, "README.md"], claudeSessionId: `s${i % 5}`, tag: i % 2 ? "BUGFIX" : "TEST", committedAt: at, capturedAt: at });
        });
        await send(srv.url, srv.key, entries);
        const { db, project } = srv;
        await srv.stop();
        srv = undefined;
        const sql = new Bun.SQL(db.url);
        await sql.unsafe(`
          DROP TABLE entry_paths, stats_days, stats_sessions, stats_files, stats_file_blocks;
          DROP FUNCTION aiflare_entries_inserted, aiflare_entries_updated, aiflare_files_inserted, aiflare_files_deleted CASCADE;
          DROP FUNCTION aiflare_path_and_folders, aiflare_day, aiflare_file_days_inserted, aiflare_file_days_updated;
          CREATE INDEX entry_files_by_path ON entry_files (project_id, path text_pattern_ops);
          UPDATE entries SET search = to_tsvector('simple', summary);
          DELETE FROM schema_migrations WHERE version >= 6`);
        await sql.close();
        const storage = await db.open();
        try {
          for (const days of [7, 60]) {
            const s = await storage.stats(project.id, today - (days - 1) * DAY);
            const want = expectedStats(entries, today - (days - 1) * DAY);
            expect({ entries: s.entries, sessions: s.sessions, perTag: s.perTag, topFiles: s.topFiles }).toEqual(want);
          }
          const rows = await storage.timeline(project.id, { limit: 100, file: "src/m1" });
          expect(rows.map((r) => r.commitHash)).toEqual(newestFirst(entries.filter((e) => e.changedFiles[0]!.startsWith("src/m1/"))));
          expect((await storage.timeline(project.id, { limit: 100, words: ["work", "on"] })).length).toBe(30);
        } finally {
          await storage.close();
        }
      });
    }
  });
}
