/** The server's pure parts: regrouping, transcript cuts, cookies, the rate limiter and the failure gate. */
import { describe, expect, test } from "bun:test";
import { regroup, type GroupMember } from "../../src/server/grouping.ts";
import { hashKey, isKeyShaped, isTokenShaped, newKey, newToken } from "../../src/server/keys.ts";
import { FailureGate, RateLimiter, clientOf } from "../../src/server/limits.ts";
import { isLoopbackHost } from "../../src/server/http.ts";
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
  test("a sign-in token is random and key-free; only key- and token-shaped text reaches the database", () => {
    const t = newToken();
    expect(isTokenShaped(t)).toBe(true);
    expect(newToken()).not.toBe(t);
    for (const bad of ["", "x", `${t}x`, `${t.slice(1)}.`, "a".repeat(44)]) expect(isTokenShaped(bad)).toBe(false);
    expect(isKeyShaped(newKey().key)).toBe(true);
    for (const bad of ["afk_wrong", t, `afk_${t}x`, `AFK_${t}`]) expect(isKeyShaped(bad)).toBe(false);
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
  test("the failure gate refuses a client past its limit until its window ends, without counting it further", () => {
    const g = new FailureGate(2, 100, 1000);
    expect([g.fail("1.2.3.4", 0), g.fail("1.2.3.4", 20), g.fail("1.2.3.4", 30)]).toEqual([0, 0, 970]);
    expect(g.fail("5.6.7.8", 30)).toBe(0);
    expect(g.fail("1.2.3.4", 1000)).toBe(0);
  });
  test("the failure gate's total budget refuses every client once many clients have spent it", () => {
    const g = new FailureGate(20, 3, 1000);
    expect(["a", "b", "c", "d", "e"].map((c, i) => g.fail(c, i * 10))).toEqual([0, 0, 0, 970, 960]);
    expect(g.fail("f", 1000)).toBe(0);
  });
  const clients: [string, string][] = [
    ["203.0.113.7", "203.0.113.7"],
    ["::ffff:203.0.113.7", "203.0.113.7"],
    ["2001:db8:1:2::1", "2001:db8:1:2::/64"],
    ["2001:0db8:0001:0002:ffff:0:0:9", "2001:db8:1:2::/64"],
    ["[2001:DB8::1]", "2001:db8:0:0::/64"],
    ["fe80::1%eth0", "fe80:0:0:0::/64"],
    ["::1", "0:0:0:0::/64"],
  ];
  for (const [address, client] of clients) test(`client of ${address}: ${client}`, () => expect(clientOf(address)).toBe(client));
});

describe("loopback host names (where a cookie would reach every port)", () => {
  test.each([
    ["127.0.0.1:4180", true],
    ["127.9.8.7", true],
    ["localhost", true],
    ["LocalHost:80", true],
    ["abc.localhost:4180", true],
    ["[::1]:4180", true],
    ["localhost:4180, proxy.internal", true],
    ["aiflare.example.com", false],
    ["localhost.example.com", false],
    ["127.0.0.1.nip.io", false],
    ["10.0.0.5:4180", false],
    ["[::2]:4180", false],
    ["", false],
  ])("%s → %p", (host, loopback) => {
    expect(isLoopbackHost(host)).toBe(loopback);
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
