/** The server's pure parts: regrouping, transcript cuts, cookies, the rate limiter and the failure gate. */
import { describe, expect, test } from "bun:test";
import { regroup, type GroupMember } from "../../src/server/grouping.ts";
import { hashKey, newKey, signSession, verifySession } from "../../src/server/keys.ts";
import { FailureGate, RateLimiter } from "../../src/server/limits.ts";
import { databaseTarget, describeDatabase } from "../../src/server/open.ts";
import { timelineQuery, transcriptCuts } from "../../src/server/read.ts";

const m = (commitHash: string, over: Partial<GroupMember> = {}): GroupMember => ({
  commitHash,
  groupRootId: null,
  auto: true,
  hasUser: false,
  continuation: false,
  ...over,
});

describe("regroup (SPEC §5 on the server)", () => {
  const cases: [string, GroupMember[], Record<string, string | null>][] = [
    ["first entry is a root", [m("a", { hasUser: true })], {}],
    ["agent commits on its own: same group", [m("a", { hasUser: true }), m("b"), m("c")], { b: "a", c: "a" }],
    ["answer to a question: same group", [m("a", { hasUser: true }), m("b", { hasUser: true, continuation: true })], { b: "a" }],
    ["new request in plain text: new root", [m("a", { hasUser: true }), m("b", { hasUser: true }), m("c")], { c: "b" }],
    ["a client-grouped entry is left alone and followed", [m("a", { auto: false, groupRootId: "x" }), m("b")], { b: "x" }],
    ["a late root takes over a former root", [m("a", { hasUser: true }), m("b", { groupRootId: null })], { b: "a" }],
    ["a changed answer is undone", [m("a", { hasUser: true }), m("b", { hasUser: true, groupRootId: "a" })], { b: null }],
  ];
  for (const [name, members, changes] of cases) {
    test(name, () => {
      expect(Object.fromEntries(regroup(members).map((c) => [c.commitHash, c.groupRootId]))).toEqual(changes);
    });
  }
});

describe("transcript cuts", () => {
  const l = (role: string, content: string) => JSON.stringify({ role, content });
  const entry = (commitHash: string, lines: string[]) => ({ commitHash, groupRootId: null, summary: "{}", sortMs: 0, recordedMs: 0, conversation: `${lines.join("\n")}\n` });
  test("each commit cuts after its delta's last line, found in order", () => {
    const t = [l("user", "a"), l("assistant", "ok"), l("user", "b"), l("assistant", "ok"), l("user", "c")].join("\n");
    expect(transcriptCuts(`${t}\n`, [entry("1", [l("user", "a"), l("assistant", "ok")]), entry("2", [l("user", "b"), l("assistant", "ok")])])).toEqual([
      { commitHash: "1", afterLine: 2 },
      { commitHash: "2", afterLine: 4 },
    ]);
  });
  test("a delta the transcript lacks advances by its own length, never past the end", () => {
    const t = `${l("user", "a")}\n`;
    expect(transcriptCuts(t, [entry("1", [l("user", "zzz"), l("assistant", "y")]), entry("2", [l("user", "q")])]).map((c) => c.afterLine)).toEqual([1, 1]);
  });
});

describe("keys and cookies", () => {
  test("a key is long and random; only its hash is kept", () => {
    const a = newKey();
    const b = newKey();
    expect(a.key).toMatch(/^afk_[A-Za-z0-9_-]{43}$/);
    expect(a.key).not.toBe(b.key);
    expect(a.hash).toBe(hashKey(a.key));
    expect(a.hash).not.toContain(a.key.slice(4, 12));
    expect(a.key.startsWith(a.prefix)).toBe(true);
  });
  test("a signed session verifies; a changed payload, another secret or an old one does not", () => {
    const v = signSession({ keys: ["key_1"], issuedMs: 1000 }, "s1");
    expect(verifySession(v, "s1", 2000)).toEqual({ keys: ["key_1"], issuedMs: 1000 });
    expect(verifySession(v, "s2", 2000)).toBeNull();
    const [, sig] = v.split(".");
    const forged = `${Buffer.from(JSON.stringify({ k: ["key_2"], t: 1000 })).toString("base64url")}.${sig}`;
    expect(verifySession(forged, "s1", 2000)).toBeNull();
    expect(verifySession(v, "s1", 1000 + 31 * 86_400_000)).toBeNull();
    expect(verifySession("garbage", "s1")).toBeNull();
  });
});

describe("limits", () => {
  test("the rate limiter allows a burst, then asks to wait, then refills", () => {
    const r = new RateLimiter(2, 4);
    const got = Array.from({ length: 6 }, () => r.take("k", 0));
    expect(got.slice(0, 4)).toEqual([0, 0, 0, 0]);
    expect(got[4]).toBe(500);
    expect(r.take("k", 600)).toBe(0);
    expect(r.take("other", 0)).toBe(0);
    expect(new RateLimiter(0, 0).take("k")).toBe(0);
  });
  test("the failure gate closes after the limit until the window ends", () => {
    const g = new FailureGate(2, 1000);
    g.fail("1.2.3.4", 0);
    expect(g.wait("1.2.3.4", 10)).toBe(0);
    g.fail("1.2.3.4", 20);
    expect(g.wait("1.2.3.4", 30)).toBe(970);
    expect(g.wait("5.6.7.8", 30)).toBe(0);
    expect(g.wait("1.2.3.4", 1000)).toBe(0);
  });
});

describe("settings of the server", () => {
  test("the database: --database, then AIFLARE_DATABASE_URL, then SQLite under --data-dir or XDG_DATA_HOME", () => {
    expect(databaseTarget({ database: "postgres://u@h/db", env: {} })).toEqual({ kind: "postgres", url: "postgres://u@h/db" });
    expect(databaseTarget({ env: { AIFLARE_DATABASE_URL: "postgresql://h/x" } })).toEqual({ kind: "postgres", url: "postgresql://h/x" });
    expect(databaseTarget({ database: "sqlite:///srv/a.db", env: {} })).toEqual({ kind: "sqlite", path: "/srv/a.db" });
    expect(databaseTarget({ dataDir: "/srv/data", env: {} })).toEqual({ kind: "sqlite", path: "/srv/data/server.sqlite" });
    expect(databaseTarget({ env: { XDG_DATA_HOME: "/x", HOME: "/h" } })).toEqual({ kind: "sqlite", path: "/x/aiflare/server.sqlite" });
    expect(databaseTarget({ env: { HOME: "/h" } })).toEqual({ kind: "sqlite", path: "/h/.local/share/aiflare/server.sqlite" });
  });
  test("where the database is, as printed: a PostgreSQL password never shows; relative paths follow --cwd", () => {
    expect(describeDatabase({ kind: "postgres", url: "postgres://app:s3cret@db:5432/aiflare" })).toBe("PostgreSQL postgres://app:***@db:5432/aiflare");
    expect(describeDatabase({ kind: "sqlite", path: "/srv/a.sqlite" })).toBe("SQLite /srv/a.sqlite");
    expect(databaseTarget({ database: "team.sqlite", cwd: "/srv", env: {} })).toEqual({ kind: "sqlite", path: "/srv/team.sqlite" });
  });
  test("timeline query: page size, tags and times are checked", () => {
    const now = new Date("2026-06-10T12:00:00Z");
    expect(timelineQuery(new URLSearchParams("limit=10&tag=bugfix,TEST&since=7d&q=Cache%20it!"), now)).toMatchObject({
      limit: 11,
      tags: ["BUGFIX", "TEST"],
      sinceMs: now.getTime() - 7 * 86_400_000,
      words: ["cache", "it"],
    });
    for (const bad of ["limit=0", "limit=201", "tag=CHORE", "since=later", "cursor=abc"]) expect(() => timelineQuery(new URLSearchParams(bad), now)).toThrow();
  });
});
