import { Database } from "bun:sqlite";
import { afterEach, describe, expect, test } from "bun:test";
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, utimesSync, writeFileSync } from "node:fs";
import { basename, join } from "node:path";
import {
  clearSyncError,
  indexPath,
  lastSyncError,
  markEntriesAccepted,
  markSessionAccepted,
  pendingEntries,
  pendingEntryCount,
  pendingSessions,
  recordSyncFailure,
  SCHEMA_VERSION,
  sessionFirstRequest,
  withIndex,
} from "../../src/store/index-db.ts";
import { buildIndexFile, CHECK_EVERY_MS, passesQuickCheck } from "../../src/store/index/db.ts";
import { readEntryRows, type EntryRow } from "../../src/store/index/entry-rows.ts";
import { readEntryRowsInThread, THREAD_MIN_ENTRIES } from "../../src/store/index/rows-thread.ts";
import { legacySessionPath, segmentPath, sessionDir, TIMELINE_REF } from "../../src/store/refs.ts";
import { tempRepo, type TempRepo } from "../helpers.ts";
import { convo, fakeHash, makeEntry, writeTimeline } from "../timeline-fixture.ts";

/** The backend the sync state tests speak of. */
const T = "https://aiflare.example key-sha256:0123456789abcdef";

let repos: TempRepo[] = [];
afterEach(() => {
  for (const r of repos) r.cleanup();
  repos = [];
});

function setup(n = 3) {
  const repo = tempRepo();
  repos.push(repo);
  const entries = Array.from({ length: n }, (_, i) =>
    makeEntry({
      commitHash: fakeHash(i),
      title: `Entry ${i}`,
      capturedAt: new Date(Date.UTC(2026, 10, 29, 10, i)).toISOString(),
      changedFiles: [`src/f${i}.ts`],
      conversationSnippet: convo(["user", `request number ${i}`], ["assistant", `reply ${i}`]),
    }),
  );
  writeTimeline(repo.root, repo.env, { entries, sessions: { "session-1": convo(["user", "first request"]) } });
  return { repo, commonDir: join(repo.root, ".git"), entries };
}

/** Turns the repository's packs (git fast-import writes one) into loose objects, as the commit hook leaves its own. */
function looseObjects(repo: TempRepo): void {
  const dir = join(repo.root, ".git", "objects", "pack");
  for (const name of readdirSync(dir)) {
    if (!name.endsWith(".pack")) continue;
    const pack = readFileSync(join(dir, name));
    for (const ext of [".pack", ".idx", ".rev"]) rmSync(join(dir, name.replace(/\.pack$/, ext)), { force: true });
    const r = Bun.spawnSync(["git", "unpack-objects", "-q"], { cwd: repo.root, env: repo.env, stdin: pack });
    if (r.exitCode !== 0) throw new Error(`git unpack-objects: ${r.stderr.toString()}`);
  }
}

const count = (db: Database, table: string) => (db.query(`SELECT count(*) AS n FROM ${table}`).get() as { n: number }).n;

describe("refresh", () => {
  test("first use imports everything; nothing moved means no git at all", async () => {
    const { commonDir } = setup(3);
    const first = await withIndex(commonDir, (db, r) => ({ r, entries: count(db, "entries"), files: count(db, "entry_files") }));
    expect(first).toEqual({ r: { upToDate: false, mode: "full", entriesChanged: 3, sessionsChanged: 1, skipped: 0 }, entries: 3, files: 3 });
    // With git off the PATH, an up-to-date index must still answer.
    const path = process.env.PATH;
    process.env.PATH = "/nonexistent";
    try {
      expect(await withIndex(commonDir, (db, r) => [r.upToDate, count(db, "entries")])).toEqual([true, 3]);
    } finally {
      process.env.PATH = path;
    }
  });

  test("reads only the changed paths after new, changed and removed entries, a few of them without starting git", async () => {
    const { repo, commonDir, entries } = setup(3);
    await withIndex(commonDir, () => null);
    writeTimeline(repo.root, repo.env, {
      entries: [makeEntry({ ...entries[1]!, title: "Renamed" }), makeEntry({ commitHash: fakeHash(9), title: "New one" })],
      remove: [fakeHash(0)],
      sessions: { "session-2": convo(["user", "second request"]) },
    });
    // the few changed objects (loose, as the commit hook writes them) are read in this process: git is off the PATH
    looseObjects(repo);
    const path = process.env.PATH;
    process.env.PATH = "/nonexistent";
    const r = await withIndex(commonDir, (db, r) => ({
      sessionBytes: (db.query("SELECT bytes AS b FROM sessions WHERE session_id = 'session-2'").get() as { b: number } | null)?.b,
      r,
      titles: (db.query("SELECT title FROM entries ORDER BY title").all() as { title: string }[]).map((x) => x.title),
      orphans: count(db, "entry_files") - count(db, "entries"),
      fts: (db.query("SELECT count(*) AS n FROM entries_fts WHERE entries_fts MATCH 'request'").get() as { n: number }).n,
      removed: (db.query("SELECT count(*) AS n FROM entries_fts WHERE entries_fts MATCH 'number AND 0'").get() as { n: number }).n,
    })).finally(() => (process.env.PATH = path));
    expect(r.r).toMatchObject({ mode: "incremental", entriesChanged: 3, sessionsChanged: 1 });
    expect(r.sessionBytes).toBe(Buffer.byteLength(convo(["user", "second request"])));
    expect(r.titles).toEqual(["Entry 2", "New one", "Renamed"]);
    expect(r.orphans).toBe(0); // the removed entry left nothing behind
    expect(r.fts).toBe(2);
    expect(r.removed).toBe(0);
  });

  test("invalid entry files are left out, not fatal", async () => {
    const { repo, commonDir } = setup(1);
    const h = fakeHash(5);
    writeTimeline(repo.root, repo.env, {
      entries: [
        { path: `entries/${h.slice(0, 2)}/${h.slice(2)}.json`, raw: "{not json" },
        { path: `entries/${fakeHash(6).slice(0, 2)}/${fakeHash(6).slice(2)}.json`, raw: JSON.stringify(makeEntry({ commitHash: fakeHash(7) })) },
        { path: "entries/README", raw: "ignored" },
      ],
    });
    const r = await withIndex(commonDir, (db, r) => [r.skipped, count(db, "entries")]);
    expect(r).toEqual([2, 1]);
  });

  test("transcripts are not copied into the index: their first request is read from the branch when asked", async () => {
    const { commonDir } = setup(1);
    const r = await withIndex(commonDir, (db) => {
      const stored = db.query("SELECT first_request AS f, bytes AS b FROM sessions").get() as { f: string | null; b: number };
      const first = sessionFirstRequest(db, "session-1");
      const kept = (db.query("SELECT first_request AS f FROM sessions").get() as { f: string | null }).f;
      return { stored, first, kept, missing: sessionFirstRequest(db, "no-such-session") };
    });
    expect(r).toEqual({
      stored: { f: null, b: Buffer.byteLength(convo(["user", "first request"])) },
      first: "first request",
      kept: "first request",
      missing: null,
    });
  });

  test("a deleted branch empties the index", async () => {
    const { repo, commonDir } = setup(2);
    await withIndex(commonDir, () => null);
    repo.git("update-ref", "-d", "refs/heads/aiflare/timeline/v1");
    expect(await withIndex(commonDir, (db) => count(db, "entries"))).toBe(0);
  });
});

/** Everything a query can read from the cache tables, keyed by what the branches name (not by row ids). */
function cacheContents(db: Database, words: string[]) {
  const rows = (sql: string) => db.query(sql).all();
  const matches = Object.fromEntries(
    words.map((w) => [
      w,
      (db.query(`SELECT e.commit_hash AS h FROM entries e WHERE e.id IN (SELECT rowid FROM entries_fts WHERE entries_fts MATCH ?) ORDER BY h`).all(`"${w}"*`) as { h: string }[]).map((r) => r.h),
    ]),
  );
  return {
    entries: rows(
      "SELECT commit_hash, blob_oid, session_id, group_root, tag, agent_type, branch, title, captured_at, captured_ms, recorded_ms, prompts, summary_status, author FROM entries ORDER BY commit_hash",
    ),
    files: rows("SELECT f.path, e.commit_hash FROM entry_files f JOIN entries e ON e.id = f.entry_id ORDER BY 1, 2"),
    sessions: rows("SELECT * FROM sessions ORDER BY session_id"),
    tips: rows("SELECT * FROM meta WHERE key LIKE '%_tip' ORDER BY key"),
    matches,
  };
}

describe("rebuild", () => {
  test("a rebuilt index answers every query as the one built change by change", async () => {
    const { repo, commonDir, entries } = setup(6);
    const text = (i: number, word: string) =>
      makeEntry({
        commitHash: fakeHash(i),
        title: `Entry ${i} ${word}`,
        intent: `Problem ${word}-intent → Solution → Effect`,
        alternatives: i % 2 ? `tried ${word}Alt` : "",
        diffSummary: `- src/${word}.ts: changed`,
        changedFiles: [`src/${word}.ts`, "shared.ts"],
        conversationSnippet: convo(["user", `ask about ${word} café`], ["assistant", `answered ${word}Reply`]),
        summaryStatus: i % 3 ? undefined : "pending",
      });
    await withIndex(commonDir, () => null);
    // new entries, a rewritten one (its summary arrives), a removed one, a session added: each indexed in turn
    writeTimeline(repo.root, repo.env, { entries: [text(10, "alpha"), text(11, "beta")] });
    await withIndex(commonDir, () => null);
    writeTimeline(repo.root, repo.env, { entries: [{ ...text(10, "gamma"), summaryStatus: undefined }], remove: [entries[2]!.commitHash] });
    await withIndex(commonDir, () => null);
    writeTimeline(repo.root, repo.env, { entries: [text(12, "delta")], sessions: { "session-2": convo(["user", "second"]) } });
    await withIndex(commonDir, () => null);
    // sessions of every layout: a later segment, a first-layout transcript alone and before segments, stray files
    writeTimeline(repo.root, repo.env, {
      sessionFiles: {
        [segmentPath("session-1", 2)]: convo(["assistant", "more"]),
        [legacySessionPath("old-1")]: convo(["user", "first layout"]),
        [legacySessionPath("session-2")]: convo(["user", "before the segments"]),
        [`${sessionDir("session-2")}/notes.txt`]: "not a segment",
        [`${sessionDir("session-3")}/README`]: "a directory without segments",
        "sessions/zz/not-a-fanout/000001.jsonl": convo(["user", "stray"]),
      },
    });
    const words = ["entry", "alpha", "beta", "gamma", "delta", "intent", "alt", "reply", "cafe", "café", "src", "request", "number", "ask", "shared", "nothing"];
    const incremental = await withIndex(commonDir, (db, r) => {
      expect(r.mode).toBe("incremental");
      return cacheContents(db, words);
    });
    rmSync(indexPath(commonDir));
    const rebuilt = await withIndex(commonDir, (db, r) => {
      expect(r.mode).toBe("full");
      return cacheContents(db, words);
    });
    expect(rebuilt).toEqual(incremental);
    // the comparison sees something: the words are found where they were written, and only there
    expect(incremental.entries).toHaveLength(8);
    expect(incremental.matches.alpha).toEqual([]);
    expect(incremental.matches.gamma).toEqual([fakeHash(10)]);
    expect(incremental.matches.cafe).toHaveLength(3);
    expect(incremental.matches.request).toHaveLength(5);
    expect(incremental.sessions).toHaveLength(3);
  });

  test("entries read on a thread of their own are the rows read on the calling thread", async () => {
    const { repo, commonDir } = setup(40);
    writeTimeline(repo.root, repo.env, {
      entries: [{ path: `entries/${fakeHash(50).slice(0, 2)}/${fakeHash(50).slice(2)}.json`, raw: "{not json" }],
    });
    const listed = repo.git("ls-tree", "-r", TIMELINE_REF).split("\n");
    const wanted = new Map(listed.map((l) => [l.split(/\s/)[2]!, [l.split("\t")[1]!.replace(/^entries\/(..)\/(.{38})\.json$/, "$1$2")]]));
    wanted.set("0".repeat(40), [fakeHash(51)]); // a blob that is not there
    const here: EntryRow[] = [];
    const there: EntryRow[] = [];
    const skippedHere = await readEntryRows(commonDir, wanted, (row) => void here.push(row));
    const skippedThere = await readEntryRowsInThread(commonDir, wanted, (row) => void there.push(row));
    expect(here).toHaveLength(40);
    expect(skippedHere).toBe(2);
    // the thread hands the searchable text over as UTF-8 bytes (SQLite indexes them as that text)
    const decoder = new TextDecoder();
    const asText = (rows: EntryRow[]) => rows.map((r) => ({ ...r, fts: r.fts.map((t) => (typeof t === "string" ? t : decoder.decode(t))) }));
    expect(there.every((r) => r.fts.every((t) => t instanceof Uint8Array))).toBe(true);
    expect([skippedThere, asText(there)]).toEqual([skippedHere, asText(here)]);
  });

  test("a first import of many entries (read on another thread) answers as the index built in small steps", async () => {
    const n = THREAD_MIN_ENTRIES + 100;
    const { repo, commonDir } = setup(0);
    const all = Array.from({ length: n }, (_, i) =>
      makeEntry({
        commitHash: fakeHash(i),
        title: `Entry ${i} w${i % 7}x`,
        // text beyond ASCII (accents, arrows, CJK) crosses from the reading thread as UTF-8
        intent: i % 5 === 0 ? `Café → naïve ${i} 日本語` : `plain ${i}`,
        changedFiles: [`src/f${i % 50}.ts`],
        conversationSnippet: convo(["user", `request ${i} about topic${i % 13}`]),
      }),
    );
    for (let i = 0; i < n; i += 700) {
      writeTimeline(repo.root, repo.env, { entries: all.slice(i, i + 700) });
      await withIndex(commonDir, () => null);
    }
    const words = ["w0x", "w6x", "topic12", "topic1", "request", "src", "f49", "cafe", "naive", "日本語"];
    const stepwise = await withIndex(commonDir, (db) => cacheContents(db, words));
    rmSync(indexPath(commonDir));
    const imported = await withIndex(commonDir, (db, r) => {
      expect(r).toMatchObject({ mode: "full", entriesChanged: n, skipped: 0 });
      return cacheContents(db, words);
    });
    expect(imported).toEqual(stepwise);
    expect(imported.entries).toHaveLength(n);
    expect(imported.matches.topic12).toHaveLength(Math.ceil((n - 12) / 13));
    expect(imported.matches.cafe).toHaveLength(n / 5);
    expect(imported.matches["日本語"]).toEqual(imported.matches.cafe);
  }, 60_000);

  test("one process builds a missing index at a time: another waits for it rather than building its own", async () => {
    const { commonDir } = setup(3);
    const path = indexPath(commonDir);
    mkdirSync(join(commonDir, "aiflare"), { recursive: true });
    writeFileSync(`${path}.build`, ""); // another process is building
    let done = false;
    const waiting = withIndex(commonDir, (db) => count(db, "entries")).finally(() => (done = true));
    await Bun.sleep(300);
    expect(done).toBe(false);
    expect(readdirSync(join(commonDir, "aiflare")).filter((f) => f.includes(".tmp-"))).toEqual([]);
    rmSync(`${path}.build`); // it ended without an index: this one builds
    expect(await waiting).toBe(3);
    expect(readdirSync(join(commonDir, "aiflare"))).toEqual(["index.sqlite"]);
  });

  test("a build lock left by a killed process (over ten minutes old) is taken over: the index is built", async () => {
    const { commonDir } = setup(3);
    const path = indexPath(commonDir);
    mkdirSync(join(commonDir, "aiflare"), { recursive: true });
    writeFileSync(`${path}.build`, "");
    const old = new Date(Date.now() - 11 * 60_000);
    utimesSync(`${path}.build`, old, old);
    expect(await withIndex(commonDir, (db) => count(db, "entries"))).toBe(3);
    expect(readdirSync(join(commonDir, "aiflare"))).toEqual(["index.sqlite"]);
  });

  test("a missing index is built under a private name and appears whole, or not at all", async () => {
    const { commonDir } = setup(3);
    const path = indexPath(commonDir);
    const dir = join(commonDir, "aiflare");
    mkdirSync(dir, { recursive: true });
    const stale = `${path}.tmp-1-killed`;
    writeFileSync(stale, "a build cut short by a crash");
    utimesSync(stale, new Date(Date.now() - 2 * 3600_000), new Date(Date.now() - 2 * 3600_000));
    const fresh = `${path}.tmp-2-running`;
    writeFileSync(fresh, "a build under way");
    await expect(
      buildIndexFile(path, async (db) => {
        db.run("INSERT INTO meta (key, value) VALUES ('x', 'y')");
        expect(existsSync(path)).toBe(false);
        throw new Error("cut short");
      }),
    ).rejects.toThrow("cut short");
    expect(readdirSync(dir).sort()).toEqual([basename(fresh)]); // the stale build is gone, the running one stays
    expect(await withIndex(commonDir, (db) => count(db, "entries"))).toBe(3);
    expect(readdirSync(dir).sort()).toEqual([basename(path), basename(fresh)].sort());
    const db = new Database(path, { readonly: true });
    try {
      expect((db.query("PRAGMA journal_mode").get() as { journal_mode: string }).journal_mode).toBe("wal");
      expect(passesQuickCheck(db)).toBe(true);
    } finally {
      db.close();
    }
  });
});

describe("repair", () => {
  test("garbage bytes are replaced by a rebuilt index", async () => {
    const { commonDir } = setup(2);
    await withIndex(commonDir, () => null);
    writeFileSync(indexPath(commonDir), Buffer.alloc(8192, 0x5a));
    expect(await withIndex(commonDir, (db) => count(db, "entries"))).toBe(2);
  });

  test("a damaged page inside a valid header is detected and rebuilt", async () => {
    const { commonDir } = setup(50);
    await withIndex(commonDir, () => null);
    const file = Bun.file(indexPath(commonDir));
    const bytes = new Uint8Array(await file.arrayBuffer());
    bytes.fill(0xff, 4096, bytes.length); // keep page 1 (header, schema), ruin the rest
    writeFileSync(indexPath(commonDir), bytes);
    expect(await withIndex(commonDir, (db) => count(db, "entries"))).toBe(50);
  });

  test("a damaged page that raises no error is found by the daily PRAGMA quick_check and rebuilt", async () => {
    const { commonDir } = setup(200);
    await withIndex(commonDir, () => null);
    const path = indexPath(commonDir);
    const raw = new Database(path);
    raw.run(`UPDATE meta SET value = '${Date.now() - CHECK_EVERY_MS - 1}' WHERE key = 'checked_ms'`); // a day later
    raw.run("PRAGMA wal_checkpoint(TRUNCATE)");
    const root = (raw.query("SELECT rootpage AS p FROM sqlite_master WHERE name = 'entry_files'").get() as { p: number }).p;
    const pageSize = (raw.query("PRAGMA page_size").get() as { page_size: number }).page_size;
    raw.close();
    const bytes = new Uint8Array(await Bun.file(path).arrayBuffer());
    bytes.fill(0x07, (root - 1) * pageSize + 8, root * pageSize); // the entry_files root page: cells ruined, header kept
    writeFileSync(path, bytes);
    const check = new Database(path);
    const ok = (check.query("PRAGMA quick_check").values() as string[][]).every((r) => r[0] === "ok");
    check.close();
    expect(ok).toBe(false);
    const n = await withIndex(commonDir, (db) =>
      (db.query("SELECT count(*) AS n FROM entry_files WHERE path = 'src/f7.ts'").get() as { n: number }).n,
    );
    expect(n).toBe(1);
  });

  const asRoot = process.getuid?.() === 0; // root writes through file permissions

  /** Makes `path` refuse writes even to root (the immutable attribute), or returns false where that is not possible. */
  function makeImmutable(path: string): boolean {
    if (!asRoot) {
      chmodSync(path, statSync(path).isDirectory() ? 0o555 : 0o444);
      return true;
    }
    return Bun.spawnSync(["chattr", "+i", path], { stderr: "ignore" }).exitCode === 0;
  }
  function makeMutable(path: string): void {
    if (asRoot) Bun.spawnSync(["chattr", "-i", path], { stderr: "ignore" });
    else chmodSync(path, statSync(path).isDirectory() ? 0o755 : 0o644);
  }

  test("an index file that cannot be written is built in memory and left alone", async () => {
    const { repo, commonDir } = setup(3);
    await withIndex(commonDir, () => null);
    writeTimeline(repo.root, repo.env, { entries: [makeEntry({ commitHash: fakeHash(8), title: "Later" })] });
    const dir = join(commonDir, "aiflare");
    const before = statSync(indexPath(commonDir)).mtimeMs;
    if (!makeImmutable(indexPath(commonDir))) return; // a file system without the attribute
    makeImmutable(dir);
    try {
      expect(await withIndex(commonDir, (db) => count(db, "entries"))).toBe(4);
      expect(statSync(indexPath(commonDir)).mtimeMs).toBe(before);
    } finally {
      makeMutable(dir);
      makeMutable(indexPath(commonDir));
    }
  });

  test("where the index cannot be created (a read-only place), it is built in memory for the call", async () => {
    const { commonDir } = setup(2);
    const dir = join(commonDir, "aiflare");
    mkdirSync(dir, { recursive: true });
    if (!makeImmutable(dir)) return; // a file system without the attribute: covered by the non-root run
    try {
      expect(await withIndex(commonDir, (db) => count(db, "entries"))).toBe(2);
      expect(existsSync(indexPath(commonDir))).toBe(false);
    } finally {
      makeMutable(dir);
    }
  });

  test("an older schema is rebuilt, keeping the sync state", async () => {
    const { commonDir } = setup(2);
    await withIndex(commonDir, (db) => markEntriesAccepted(db, T, [fakeHash(0)], "2026-01-01T00:00:00.000Z"));
    const raw = new Database(indexPath(commonDir));
    raw.run("DROP TABLE entries_fts");
    raw.run("CREATE TABLE old_stuff (x)");
    raw.run(`PRAGMA user_version = ${SCHEMA_VERSION - 1}`);
    raw.close();
    const r = await withIndex(commonDir, (db) => ({
      version: (db.query("PRAGMA user_version").get() as { user_version: number }).user_version,
      entries: count(db, "entries"),
      pending: pendingEntries(db, T).map((p) => p.commitHash),
      old: db.query("SELECT name FROM sqlite_master WHERE name = 'old_stuff'").get(),
    }));
    expect(r).toEqual({ version: SCHEMA_VERSION, entries: 2, pending: [fakeHash(1)], old: null });
  });

  test("deleting the file loses nothing the branches hold", async () => {
    const { commonDir } = setup(4);
    await withIndex(commonDir, () => null);
    const { rmSync } = await import("node:fs");
    rmSync(indexPath(commonDir));
    expect(existsSync(indexPath(commonDir))).toBe(false);
    expect(await withIndex(commonDir, (db) => [count(db, "entries"), count(db, "sessions")])).toEqual([4, 1]);
  });
});

describe("sync state", () => {
  test("entries: pending until accepted, pending again when rewritten", async () => {
    const { repo, commonDir, entries } = setup(3);
    const pending = await withIndex(commonDir, (db) => pendingEntries(db, T));
    expect(pending.map((p) => p.commitHash)).toEqual([fakeHash(0), fakeHash(1), fakeHash(2)]);
    expect(pending[0]!.entry.title).toBe("Entry 0");
    await withIndex(commonDir, (db) => markEntriesAccepted(db, T, pending.slice(0, 2)));
    expect(await withIndex(commonDir, (db) => pendingEntries(db, T).map((p) => p.commitHash))).toEqual([fakeHash(2)]);
    expect(await withIndex(commonDir, (db) => pendingEntryCount(db, T))).toBe(1);
    // The agent's summary rewrites entry 1: it must be sent again.
    writeTimeline(repo.root, repo.env, { entries: [makeEntry({ ...entries[1]!, title: "With summary" })] });
    const again = await withIndex(commonDir, (db) => pendingEntries(db, T, { commits: [fakeHash(1), fakeHash(0)] }));
    expect(again.map((p) => [p.commitHash, p.entry.title])).toEqual([[fakeHash(1), "With summary"]]);
  });

  test("an acceptance recorded for an older version does not hide the newer one", async () => {
    const { repo, commonDir, entries } = setup(1);
    const [p] = await withIndex(commonDir, (db) => pendingEntries(db, T));
    writeTimeline(repo.root, repo.env, { entries: [makeEntry({ ...entries[0]!, title: "Newer" })] });
    await withIndex(commonDir, (db) => markEntriesAccepted(db, T, [p!]));
    expect(await withIndex(commonDir, (db) => pendingEntries(db, T).map((x) => x.entry.title))).toEqual(["Newer"]);
  });

  test("failures count attempts and keep the last error", async () => {
    const { commonDir } = setup(2);
    const r = await withIndex(commonDir, (db) => {
      expect(lastSyncError(db, T)).toBeNull();
      recordSyncFailure(db, T, [fakeHash(0)], "HTTP 503", "2026-01-01T00:00:00.000Z");
      recordSyncFailure(db, T, [fakeHash(0), fakeHash(1)], "HTTP 429", "2026-01-02T00:00:00.000Z");
      const out = { pending: pendingEntries(db, T).map((p) => [p.attempts, p.lastError]), last: lastSyncError(db, T) };
      markEntriesAccepted(db, T, [fakeHash(0)]);
      clearSyncError(db, T);
      return { ...out, after: pendingEntries(db, T).length, cleared: lastSyncError(db, T) };
    });
    expect(r).toEqual({
      pending: [
        [2, "HTTP 429"],
        [1, "HTTP 429"],
      ],
      last: { message: "HTTP 429", at: "2026-01-02T00:00:00.000Z" },
      after: 1,
      cleared: null,
    });
  });

  test("sessions: pending by content hash", async () => {
    const { repo, commonDir } = setup(1);
    const [s] = await withIndex(commonDir, (db) => pendingSessions(db, T));
    expect(s).toMatchObject({ sessionId: "session-1", content: convo(["user", "first request"]) });
    await withIndex(commonDir, (db) => markSessionAccepted(db, T, s!.sessionId, s!.contentHash));
    expect(await withIndex(commonDir, (db) => pendingSessions(db, T).length)).toBe(0);
    writeTimeline(repo.root, repo.env, { sessions: { "session-1": convo(["user", "first request"], ["assistant", "more"]) } });
    expect(await withIndex(commonDir, (db) => pendingSessions(db, T, { sessionIds: ["session-1", "other"] }).length)).toBe(1);
  });
});
