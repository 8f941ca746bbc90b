import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { createClient, parseRetryAfter, reasonFromBody } from "../../src/core/sync/client.ts";
import { formatSummary } from "../../src/core/sync/format.ts";
import { createIndexSource } from "../../src/core/sync/index-source.ts";
import type { SyncSource } from "../../src/core/sync/source.ts";
import { indexPath, withIndex } from "../../src/store/index-db.ts";
import { acquireSyncLock } from "../../src/core/sync/lock.ts";
import { forbiddenRefs, parsePushLines, pushedCommits, type PushLine } from "../../src/core/sync/pre-push.ts";
import { runSync, toBatches } from "../../src/core/sync/run.ts";
import { findRepo } from "../../src/core/repo.ts";
import { tempRepo, type TempRepo } from "../helpers.ts";
import { makeEntry, startBackend, writeEntries, writeSessions, type Backend } from "../sync-fixtures.ts";

const Z = "0".repeat(40);
const A = "a".repeat(40);
const B = "b".repeat(40);
const T = "c".repeat(40);

describe("parsePushLines", () => {
  test.each([
    ["one update", `refs/heads/main ${A} refs/heads/main ${B}\n`, 1],
    ["two lines, no final newline", `refs/heads/main ${A} refs/heads/main ${B}\nrefs/heads/x ${A} refs/heads/x ${Z}`, 2],
    ["a deletion", `(delete) ${Z} refs/heads/old ${B}\n`, 1],
    ["junk and empty lines are ignored", `\nhello\nrefs/heads/main zz refs/heads/main ${B}\n`, 0],
    ["sha-256 hashes", `refs/heads/main ${"a".repeat(64)} refs/heads/main ${"0".repeat(64)}\n`, 1],
  ])("%s", (_name, text, count) => {
    expect(parsePushLines(text)).toHaveLength(count);
  });
});

describe("forbiddenRefs", () => {
  const line = (localRef: string, localSha: string, remoteRef: string, remoteSha = Z): PushLine => ({ localRef, localSha, remoteRef, remoteSha });
  test.each([
    ["a normal branch", [line("refs/heads/main", A, "refs/heads/main")], []],
    ["git push --all", [line("refs/heads/main", A, "refs/heads/main"), line("refs/heads/aiflare/timeline/v1", T, "refs/heads/aiflare/timeline/v1")], ["refs/heads/aiflare/timeline/v1"]],
    ["an aiflare branch under another name", [line("refs/heads/aiflare/sessions/v1", T, "refs/heads/backup")], ["refs/heads/aiflare/sessions/v1"]],
    ["a branch pushed into aiflare/", [line("refs/heads/main", A, "refs/heads/aiflare/x")], ["refs/heads/aiflare/x"]],
    ["the tip of an aiflare branch by hash", [line(T, T, "refs/heads/copy")], [`${T} (the tip of an aiflare branch)`]],
    ["deleting a leaked remote aiflare branch", [line("(delete)", Z, "refs/heads/aiflare/timeline/v1", T)], []],
    ["a branch whose name only starts with aiflare", [line("refs/heads/aiflare-docs", A, "refs/heads/aiflare-docs")], []],
  ])("%s", (_name, lines, expected) => {
    expect(forbiddenRefs(lines, [T])).toEqual(expected);
  });
});

describe("client helpers", () => {
  test.each([
    ["seconds", "3", 3000],
    ["zero", "0", 0],
    ["absent", null, undefined],
    ["garbage", "soon", undefined],
    ["an HTTP date", new Date(Date.UTC(2030, 0, 1, 0, 0, 10)).toUTCString(), 10_000],
  ])("parseRetryAfter %s", (_n, value, ms) => {
    expect(parseRetryAfter(value, Date.UTC(2030, 0, 1, 0, 0, 0))).toBe(ms as number | undefined);
  });

  test.each([
    ['{"message":"tag is invalid"}', "tag is invalid"],
    ['{"error":{"message":"nested"}}', "nested"],
    ['{"error":"plain"}', "plain"],
    ["line one\n  line two", "line one line two"],
    ["x".repeat(500), `${"x".repeat(197)}...`],
  ])("reasonFromBody %#", (body, reason) => {
    expect(reasonFromBody(body)).toBe(reason);
  });

  test("toBatches keeps ≤ 100 entries and ≤ the byte cap per batch", () => {
    const items = Array.from({ length: 250 }, (_, i) => ({ body: `{"i":${i}}` }));
    expect(toBatches(items).map((b) => b.length)).toEqual([100, 100, 50]);
    const big = Array.from({ length: 5 }, () => ({ body: "x".repeat(40) }));
    expect(toBatches(big, 100, 100).map((b) => b.length)).toEqual([2, 2, 1]);
    expect(toBatches([{ body: "x".repeat(500) }], 100, 100)).toHaveLength(1);
  });

  test("toBatches also closes a batch before it lists more changed files than the server takes", () => {
    const items = Array.from({ length: 30 }, () => ({ body: "{}", files: 1000 }));
    expect(toBatches(items).map((b) => b.length)).toEqual([10, 10, 10]);
    expect(toBatches([{ body: "{}", files: 9000 }, { body: "{}", files: 1000 }, { body: "{}", files: 1 }]).map((b) => b.length)).toEqual([2, 1]);
  });
});

describe("formatSummary", () => {
  const base = { dryRun: false, requests: 2, durationMs: 1234, entries: { sent: 3, skipped: 0, failed: 0 }, sessions: { sent: 1, skipped: 0, failed: 0 }, skipped: [], failed: [] };
  test.each([
    ["all sent", base, ["Sent 3 entries and 1 session to https://x (key …abcd) in 1.2 s."]],
    ["nothing to do", { ...base, requests: 0, entries: { sent: 0, skipped: 0, failed: 0 }, sessions: { sent: 0, skipped: 0, failed: 0 } }, ["Nothing to send: the backend has every captured entry."]],
    [
      "failures grouped by reason",
      {
        ...base,
        entries: { sent: 1, skipped: 0, failed: 7 },
        failed: Array.from({ length: 7 }, (_, i) => ({ kind: "entry" as const, id: String(i).repeat(40), reason: "HTTP 500" })),
      },
      ["Sent 1 entry and 1 session to https://x (key …abcd) in 1.2 s.", "Failed 7:", "  7 entries (0000000, 1111111, 2222222, 3333333, 4444444 and 2 more): HTTP 500", "Failed entries stay pending; `aiflare sync` sends them again."],
    ],
  ])("%s", (_n, summary, lines) => {
    expect(formatSummary(summary, { endpoint: "https://x", key: "…abcd" }).split("\n")).toEqual(lines);
  });
});

describe("HTTP client against a real server", () => {
  let be: Backend;
  beforeAll(() => {
    be = startBackend();
  });
  afterAll(() => be.stop());
  const sleeps: number[] = [];
  const client = (over: Partial<Parameters<typeof createClient>[0]> = {}) =>
    createClient({
      endpoint: `${be.url}/`,
      apiKey: "k-secret-9876",
      keyHint: "api_key in aiflare.yml (key …9876)",
      backoffMs: 1,
      sleep: async (ms) => void sleeps.push(ms),
      ...over,
    });

  test("sends the key header and the body; 2xx is ok", async () => {
    be.respond(() => new Response(null, { status: 204 }));
    const before = be.received.length;
    const r = await client().postBatch('{"captures":[]}');
    expect(r).toEqual({ ok: true, status: 204, attempts: 1, body: "" });
    const got = be.received[before]!;
    expect([got.method, got.path, got.key]).toEqual(["POST", "/api/v1/captures/batch", "k-secret-9876"]);
    expect(got.body).toEqual({ captures: [] });
  });

  test.each([
    [401, "fatal", "refused the API key"],
    [403, "fatal", "refused the API key"],
    [404, "fatal", "no project for this key"],
    [400, "rejected", "rejected the data (400): bad tag"],
    [413, "rejected", "rejected the data (413)"],
  ])("%d stops at once as %s", async (status, kind, text) => {
    be.respond(() => Response.json({ message: "bad tag" }, { status }));
    const before = be.received.length;
    const r = await client().putSession('{"claudeSessionId":"s","content":""}');
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.kind).toBe(kind as "fatal" | "rejected");
    expect(r.message).toContain(text);
    expect(r.message).not.toContain("k-secret-9876");
    expect(be.received.length - before).toBe(1);
  });

  test("429 honours Retry-After, then succeeds", async () => {
    sleeps.length = 0;
    be.respond((_r, n) => (n % 2 === 0 ? new Response("slow down", { status: 429, headers: { "retry-after": "2" } }) : Response.json({})));
    const r = await client().postBatch("{}");
    expect(r).toMatchObject({ ok: true, attempts: 2 });
    expect(sleeps).toEqual([2000]);
  });

  test("Retry-After beyond the cap is cut to the cap", async () => {
    sleeps.length = 0;
    be.respond(() => new Response("", { status: 503, headers: { "retry-after": "3600" } }));
    const r = await client({ attempts: 2, maxRetryAfterMs: 50 }).postBatch("{}");
    expect(r).toMatchObject({ ok: false, kind: "unavailable", status: 503, attempts: 2 });
    expect(sleeps).toEqual([50]);
  });

  test("5xx is retried with growing backoff, then reported unavailable", async () => {
    sleeps.length = 0;
    be.respond(() => new Response("boom", { status: 500 }));
    const before = be.received.length;
    const r = await client({ backoffMs: 100 }).postBatch("{}");
    expect(r).toMatchObject({ ok: false, kind: "unavailable", status: 500, attempts: 4 });
    expect(be.received.length - before).toBe(4);
    expect(sleeps).toHaveLength(3);
    expect(sleeps[0]!).toBeGreaterThanOrEqual(75);
    expect(sleeps[2]!).toBeGreaterThanOrEqual(300);
    if (!r.ok) expect(r.message).toContain("HTTP 500");
  });

  test("a request that gets no answer in time is aborted and retried", async () => {
    be.respond(async (_r, n) => {
      if (n % 2 === 0) await Bun.sleep(1000);
      return Response.json({});
    });
    const r = await client({ timeoutMs: 150 }).postBatch("{}");
    expect(r).toMatchObject({ ok: true, attempts: 2 });
    be.respond(async () => {
      await Bun.sleep(1000);
      return Response.json({});
    });
    const r2 = await client({ timeoutMs: 100, attempts: 2 }).postBatch("{}");
    expect(r2).toMatchObject({ ok: false, kind: "unavailable" });
    if (!r2.ok) expect(r2.message).toContain("no answer within 0.1 s");
  });

  test("a closed port is reported as connection refused after retries", async () => {
    const dead = startBackend();
    dead.stop();
    const r = await createClient({ endpoint: dead.url, apiKey: "k", attempts: 2, backoffMs: 1 }).postBatch("{}");
    expect(r).toMatchObject({ ok: false, kind: "unavailable", attempts: 2 });
    if (!r.ok) expect(r.message).toContain("connection refused");
  });

  test("a redirect is not followed (the key would travel on)", async () => {
    be.respond(() => new Response(null, { status: 301, headers: { location: "https://elsewhere.example/api" } }));
    const r = await client().postBatch("{}");
    expect(r).toMatchObject({ ok: false, kind: "fatal", status: 301 });
    if (!r.ok) expect(r.message).toContain("https://elsewhere.example/api");
  });
});

describe("runSync with the index source and a real server", () => {
  let be: Backend;
  let repo: TempRepo;
  beforeAll(() => {
    be = startBackend();
  });
  afterAll(() => be.stop());

  const setup = (n: number, sessions = 3) => {
    repo?.cleanup();
    repo = tempRepo();
    // runSync takes full hashes; these commits need not exist
    const hashes = Array.from({ length: n }, (_, i) => new Bun.CryptoHasher("sha1").update(`c${i}`).digest("hex"));
    writeEntries(
      repo,
      hashes.map((h, i) => makeEntry(h, { claudeSessionId: `s${i % sessions}`, intent: `fixed in /home/alice/p${i}` })),
    );
    writeSessions(repo, Object.fromEntries(Array.from({ length: sessions }, (_, i) => [`s${i}`, `{"role":"user","content":"cd /Users/bob/w${i}"}\n`])));
    return hashes;
  };
  const sync = (req: Parameters<typeof runSync>[0] = {}, client = createClient({ endpoint: be.url, apiKey: "key-1", backoffMs: 1, attempts: 2 })) =>
    withIndex(findRepo(repo.root)!.commonDir, (db) => runSync(req, { source: createIndexSource(db, "https://aiflare.example key-sha256:0123456789abcdef"), client }));
  /** Runs `fn` on a fresh index source of the test repository. */
  const src = <T>(fn: (s: SyncSource) => T) => withIndex(findRepo(repo.root)!.commonDir, (db) => fn(createIndexSource(db, "https://aiflare.example key-sha256:0123456789abcdef")));
  afterAll(() => repo?.cleanup());

  test("sends 250 entries in 3 batches, each session once, redacted; a second run sends nothing", async () => {
    const hashes = setup(250);
    be.respond(() => Response.json({}));
    const before = be.received.length;
    const s = await sync();
    const got = be.received.slice(before);
    expect(got.filter((r) => r.path === "/api/v1/captures/batch").map((r) => r.body.captures.length).sort()).toEqual([100, 100, 50]);
    const sessions = got.filter((r) => r.path === "/api/v1/work-sessions/prompt");
    expect(sessions.map((r) => r.body.claudeSessionId).sort()).toEqual(["s0", "s1", "s2"]);
    expect(new Set(got.flatMap((r) => (r.body.captures ?? []).map((c: any) => c.commitHash)))).toEqual(new Set(hashes));
    const text = JSON.stringify(got.map((r) => r.body));
    expect(text).not.toContain("/home/alice");
    expect(text).not.toContain("/Users/bob");
    expect(text).toContain("~/p0");
    expect(s).toMatchObject({ entries: { sent: 250, failed: 0 }, sessions: { sent: 3, failed: 0 }, requests: 6 });

    const again = await sync();
    expect(be.received.length - before).toBe(6);
    expect(again).toMatchObject({ entries: { sent: 0 }, sessions: { sent: 0 }, requests: 0 });
    expect(formatSummary(again, {})).toContain("Nothing to send");
  });

  test("a 400 fails that batch only; the failed entries are sent next time", async () => {
    const hashes = setup(150, 1);
    be.respond(
      (() => {
        let first = true;
        return (r: { path: string }) => {
          if (r.path.endsWith("/batch") && first) {
            first = false;
            return Response.json({ message: "bad entry" }, { status: 400 });
          }
          return Response.json({});
        };
      })(),
    );
    const s = await sync({}, createClient({ endpoint: be.url, apiKey: "k", backoffMs: 1 }));
    expect(s.entries.failed + s.entries.sent).toBe(150);
    expect(s.entries.failed).toBeGreaterThanOrEqual(50);
    expect(s.failed[0]!.reason).toContain("bad entry");
    expect(s.stopped).toBeUndefined();
    const failed = s.failed.map((f) => f.id);
    expect((await src((x) => x.lastError()))?.message).toContain("bad entry");
    expect((await src((x) => x.entries({}).pending)).map((p) => p.commitHash).sort()).toEqual(failed.sort());

    be.respond(() => Response.json({}));
    const before = be.received.length;
    const s2 = await sync();
    expect(s2.entries.sent).toBe(failed.length);
    expect(be.received.slice(before).flatMap((r) => r.body.captures ?? []).map((c: any) => c.commitHash).sort()).toEqual(failed.sort());
    expect(await src((x) => x.lastError())).toBeNull();
    expect(hashes).toHaveLength(150);
  });

  test("an answer listing what was stored: only that is sent; conflicts and refusals are shown and stay pending", async () => {
    const hashes = setup(5, 1);
    const [conflict, refused] = [hashes[1]!, hashes[3]!];
    be.respond((r: { path: string; body: any }) => {
      if (!r.path.endsWith("/batch")) return Response.json({ ok: true });
      const sent: string[] = r.body.captures.map((c: any) => c.commitHash);
      const stored = sent.filter((h) => h !== conflict && h !== refused);
      return Response.json(
        {
          error: "2 of 5 entries not stored",
          accepted: stored.length,
          commits: stored,
          rejected: [{ index: sent.indexOf(refused), commitHash: refused, reason: "capturedAt: 2099-01-01T00:00:00.000Z is more than 5 minutes ahead\n\u001b[31mof the server's clock" }],
          conflicts: [{ index: sent.indexOf(conflict), commitHash: conflict, reason: "the server holds a newer capture of this commit (captured 2026-02-01T00:00:00.000Z)" }],
        },
        { status: 400 },
      );
    });
    const s = await sync();
    expect(s.entries).toMatchObject({ sent: 3, failed: 2 });
    expect(s.stopped).toBeUndefined();
    expect(s.failed).toEqual([
      { kind: "entry" as const, id: conflict, reason: "not stored: the server holds a newer capture of this commit (captured 2026-02-01T00:00:00.000Z)" },
      { kind: "entry" as const, id: refused, reason: "refused by the backend: capturedAt: 2099-01-01T00:00:00.000Z is more than 5 minutes ahead \u001b[31mof the server's clock" },
    ].sort((a, b) => hashes.indexOf(a.id) - hashes.indexOf(b.id)));
    expect((await src((x) => x.entries({}).pending)).map((p) => p.commitHash).sort()).toEqual([conflict, refused].sort());
    // the session of the stored entries is sent
    expect(s.sessions.sent).toBe(1);
    const text = formatSummary(s, {});
    expect(text).toContain("Sent 3 entries and 1 session");
    expect(text).toContain(`1 entry (${conflict.slice(0, 7)}): not stored: the server holds a newer capture`);
    expect(text).toContain("Failed entries stay pending");
    // a backend answering 200 without a list: the whole batch counts as stored, as before
    be.respond(() => Response.json({}));
    expect((await sync()).entries).toMatchObject({ sent: 2, failed: 0 });
  });

  test("401 stops at once: one request, nothing recorded as accepted", async () => {
    setup(250);
    be.respond(() => new Response("", { status: 401 }));
    const before = be.received.length;
    const s = await sync({}, createClient({ endpoint: be.url, apiKey: "k", keyHint: "AIFLARE_API_KEY (key …k)", backoffMs: 1 }));
    expect(be.received.length - before).toBe(1);
    expect(s.stopped).toContain("check AIFLARE_API_KEY");
    expect(s.entries.failed).toBe(250);
    expect(s.entries.sent).toBe(0);
    expect(await src((x) => x.entries({}).pending)).toHaveLength(250);
  });

  test("a rewritten entry is pending again; commit scope and --all", async () => {
    const hashes = setup(3, 1);
    be.respond(() => Response.json({}));
    await sync();
    writeEntries(repo, [makeEntry(hashes[1]!, { title: "Summary written by the agent" })]);
    let before = be.received.length;
    const s = await sync();
    const sent = be.received.slice(before).flatMap((r) => r.body.captures ?? []);
    expect(sent.map((c: any) => [c.commitHash, c.title])).toEqual([[hashes[1], "Summary written by the agent"]]);
    expect(s.sessions.sent).toBe(0); // the transcript did not change

    writeSessions(repo, { s0: '{"role":"assistant","content":"more"}\n' });
    before = be.received.length;
    const s2 = await sync({ commits: [hashes[0]!, "d".repeat(40)] });
    expect(s2.skipped.map((x) => x.reason).sort()).toEqual(["already sent", "no entry captured for this commit"]);
    expect(s2.sessions.sent).toBe(1);
    expect(be.received.slice(before).map((r) => r.path)).toEqual(["/api/v1/work-sessions/prompt"]);

    before = be.received.length;
    const s3 = await sync({ commits: [hashes[0]!], all: true });
    expect(s3).toMatchObject({ entries: { sent: 1 }, sessions: { sent: 1 } });
    const s4 = await sync({ all: true });
    expect(s4).toMatchObject({ entries: { sent: 3 }, sessions: { sent: 1 } });
  });

  test("invalid stored entries are skipped with a reason; dry-run sends and records nothing", async () => {
    const hashes = setup(2, 1);
    const bad = { ...makeEntry(hashes[0]!), tag: "NOPE" } as any;
    writeEntries(repo, [bad]);
    {
      const beforeN = be.received.length;
      const s = await sync({ dryRun: true });
      expect(be.received.length).toBe(beforeN);
      expect(s.plan?.entries.map((e) => e.commitHash)).toEqual([hashes[1]!]);
      expect(s.plan?.sessions.map((x) => x.id)).toEqual(["s0"]);
      // the index leaves an invalid entry file out, so it is never sent
      expect(s.plan?.entries.map((e) => e.commitHash)).not.toContain(hashes[0]!);
      expect(await src((x) => x.entries({}).accepted)).toEqual([]);
    }
    be.respond(() => Response.json({}));
    const before = be.received.length;
    const s = await sync();
    expect(s).toMatchObject({ entries: { sent: 1 } });
    const sent = be.received.slice(before).flatMap((r) => r.body.captures ?? []).map((c: any) => c.commitHash);
    expect(sent).toEqual([hashes[1]!]);
  });

  test("a deleted or damaged index only means a re-send", async () => {
    setup(2, 1);
    be.respond(() => Response.json({}));
    await sync();
    expect((await sync()).entries.sent).toBe(0);
    writeFileSync(indexPath(findRepo(repo.root)!.commonDir), "{not a database");
    const s = await sync();
    expect(s.entries.sent).toBe(2);
  });
});

describe("pushedCommits", () => {
  test("update, new branch, deletion, unknown old tip", () => {
    const repo = tempRepo();
    try {
      repo.git("init", "-q", "--bare", join(repo.dir, "remote.git"));
      repo.git("remote", "add", "origin", join(repo.dir, "remote.git"));
      const base = repo.git("rev-parse", "HEAD");
      repo.git("push", "-q", "origin", "main");
      const c1 = repo.commit("one");
      const c2 = repo.commit("two");
      repo.git("checkout", "-q", "-b", "feat");
      const c3 = repo.commit("three");
      const sort = (x: string[]) => [...x].sort();
      const upd: PushLine = { localRef: "refs/heads/main", localSha: c2, remoteRef: "refs/heads/main", remoteSha: base };
      expect(sort(pushedCommits(repo.root, "origin", [upd]))).toEqual(sort([c1, c2]));
      const newBranch: PushLine = { localRef: "refs/heads/feat", localSha: c3, remoteRef: "refs/heads/feat", remoteSha: Z };
      expect(sort(pushedCommits(repo.root, "origin", [newBranch]))).toEqual(sort([c1, c2, c3]));
      const del: PushLine = { localRef: "(delete)", localSha: Z, remoteRef: "refs/heads/old", remoteSha: c1 };
      expect(pushedCommits(repo.root, "origin", [del])).toEqual([]);
      const forced: PushLine = { ...upd, remoteSha: "e".repeat(40) };
      expect(sort(pushedCommits(repo.root, "origin", [forced]))).toEqual(sort([c1, c2]));
    } finally {
      repo.cleanup();
    }
  });
});

describe("sync lock", () => {
  test("a held lock refuses a second holder; a dead holder's lock is taken over", async () => {
    const repo = tempRepo();
    try {
      const file = join(repo.root, ".git", "aiflare", "sync.lock");
      const held = await acquireSyncLock(file, 0);
      await expect(acquireSyncLock(file, 150)).rejects.toThrow(/another aiflare sync is running \(pid \d+\)/);
      held.release();
      const again = await acquireSyncLock(file, 0);
      again.release();
      const dead = Bun.spawnSync(["true"]).pid;
      writeFileSync(file, `${dead}\n`);
      const taken = await acquireSyncLock(file, 0);
      expect(readFileSync(file, "utf8").trim()).toBe(String(process.pid));
      taken.release();
      expect(existsSync(file)).toBe(false);
    } finally {
      repo.cleanup();
    }
  });
});
