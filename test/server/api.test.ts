/** The team server's HTTP API, run against SQLite and against a real PostgreSQL. */
import { afterEach, describe, expect, test } from "bun:test";
import { createKey, createProject, revokeKey } from "../../src/server/admin.ts";
import { createApp } from "../../src/server/app.ts";
import { startServer } from "../../src/server/serve.ts";
import type { Entry } from "../../src/store/entry.ts";
import { makeEntry } from "../sync-fixtures.ts";
import { hash, testServer, useBackends } from "./backends.ts";

const BACKENDS = useBackends();
const line = (role: string, content: string) => `${JSON.stringify({ role, content })}\n`;

type Srv = Awaited<ReturnType<typeof testServer>>;
let srv: Srv | undefined;
const extra: { stop(): Promise<void> }[] = [];
afterEach(async () => {
  for (const x of extra.splice(0)) await x.stop();
  await srv?.stop();
  srv = undefined;
});

/** The name a TLS proxy in front of the server is reached by (as Host; a cookie is for such names only). */
const PUBLIC_HOST = "aiflare.example.com";

async function call(
  method: string,
  path: string,
  opts: { key?: string | null; body?: unknown; raw?: string; cookie?: string; type?: string; host?: string; headers?: Record<string, string> } = {},
) {
  const headers: Record<string, string> = { "content-type": opts.type ?? "application/json", ...opts.headers };
  const key = opts.key === undefined ? srv!.key : opts.key;
  if (key !== null) headers["x-api-key"] = key;
  if (opts.cookie) headers.cookie = opts.cookie;
  if (opts.host) headers.host = opts.host;
  const res = await fetch(`${srv!.url}${path}`, {
    method,
    headers,
    body: opts.raw ?? (opts.body === undefined ? undefined : JSON.stringify(opts.body)),
  });
  const text = await res.text();
  let json: any;
  try {
    json = JSON.parse(text);
  } catch {
    json = text;
  }
  return { status: res.status, json, headers: res.headers };
}
const batch = (captures: unknown[], key?: string | null) => call("POST", "/api/v1/captures/batch", { body: { captures }, key });
const get = (path: string, key?: string | null) => call("GET", path, { key });
const count = async () => (await get("/api/v1/stats?days=3660")).json.entries as number;

for (const backend of BACKENDS) {
  describe(`${backend.name}: write API`, () => {
    test("a batch is stored once however often it is sent; a newer capture replaces, an older does not", async () => {
      srv = await testServer(backend);
      const [a, b] = [hash("a"), hash("b")];
      const first = await batch([makeEntry(a, { title: "v1" }), makeEntry(b)]);
      expect(first.status).toBe(200);
      expect(first.json.accepted).toBe(2);
      expect((await batch([makeEntry(a, { title: "v1" }), makeEntry(b)])).status).toBe(200);
      expect(await count()).toBe(2);
      await batch([makeEntry(a, { title: "v2", capturedAt: "2026-01-02T00:00:00.000Z" })]);
      await batch([makeEntry(a, { title: "old", capturedAt: "2025-12-31T00:00:00.000Z" })]);
      const e = await get(`/api/v1/entries/${a}`);
      expect(e.json.entry.title).toBe("v2");
      expect(await count()).toBe(2);
    });

    test("a newer capture's changed files replace the stored ones; a new entry beside it keeps its own", async () => {
      srv = await testServer(backend);
      const [a, b] = [hash("files a"), hash("files b")];
      await batch([makeEntry(a, { changedFiles: ["src/old.ts", "src/kept.ts"] })]);
      await batch([makeEntry(a, { changedFiles: ["src/kept.ts", "src/new.ts"], capturedAt: "2026-01-02T00:00:00.000Z" }), makeEntry(b, { changedFiles: ["src/b.ts"] })]);
      const commits = async (path: string) => (await get(`/api/v1/files?path=${path}`)).json.entries.map((e: any) => e.commitHash);
      expect(await commits("src/old.ts")).toEqual([]);
      expect(await commits("src/kept.ts")).toEqual([a]);
      expect(await commits("src/new.ts")).toEqual([a]);
      expect(await commits("src/b.ts")).toEqual([b]);
    });

    test("a bad entry is refused by index, hash and field; the good ones of the batch are kept", async () => {
      srv = await testServer(backend);
      const good = hash("good");
      const bad = hash("bad");
      const r = await batch([makeEntry(good), { ...makeEntry(bad), tag: "CHORE" }, { nope: 1 }]);
      expect(r.status).toBe(400);
      expect(r.json.error).toContain("2 of 3 entries refused");
      expect(r.json.error).toContain(`entry 1 (${bad.slice(0, 12)}): tag`);
      expect(r.json.commits).toEqual([good]);
      expect(r.json.rejected.map((x: any) => x.index)).toEqual([1, 2]);
      expect(r.json.rejected[1].reason).toContain("commitHash");
      expect(await count()).toBe(1);
    });

    test("an older capture is not stored and is answered 409 with the conflict, never as accepted", async () => {
      srv = await testServer(backend);
      const [a, b] = [hash("conflict a"), hash("conflict b")];
      await batch([makeEntry(a, { title: "newer", capturedAt: "2026-01-02T00:00:00.000Z" })]);
      const r = await batch([makeEntry(a, { title: "older", capturedAt: "2026-01-01T00:00:00.000Z" }), makeEntry(b)]);
      expect(r.status).toBe(409);
      expect(r.json.accepted).toBe(1);
      expect(r.json.commits).toEqual([b]);
      expect(r.json.conflicts).toEqual([
        { index: 0, commitHash: a, storedCapturedAt: "2026-01-02T00:00:00.000Z", reason: "the server holds a newer capture of this commit (captured 2026-01-02T00:00:00.000Z)" },
      ]);
      expect(r.json.error).toContain("1 of 2 entries not stored; entry 0");
      expect((await get(`/api/v1/entries/${a}`)).json.entry.title).toBe("newer");
      const one = await call("POST", "/api/v1/captures", { body: makeEntry(a, { capturedAt: "2025-06-01T00:00:00.000Z" }) });
      expect(one.status).toBe(409);
      expect(one.json.accepted).toBe(0);
      expect(one.json.conflicts[0].commitHash).toBe(a);
    });

    test("a capturedAt beyond the clock skew is refused; the genuine capture after it is stored", async () => {
      srv = await testServer(backend);
      const c = hash("forged future");
      const soon = new Date(Date.now() + 60_000).toISOString(); // within the skew: a clock a minute fast
      const forged = await batch([makeEntry(c, { title: "forged", capturedAt: "2099-01-01T00:00:00.000Z" })]);
      expect(forged.status).toBe(400);
      expect(forged.json.commits).toEqual([]);
      expect(forged.json.rejected[0].reason).toContain("capturedAt: 2099-01-01T00:00:00.000Z is more than 5 minutes ahead");
      expect((await batch([makeEntry(c, { title: "genuine", capturedAt: soon })])).status).toBe(200);
      expect((await get(`/api/v1/entries/${c}`)).json.entry.title).toBe("genuine");
      // a capture stored with a future time before the check (an older server let it in) loses to the genuine one
      const d = hash("stored future");
      const { checkEntry } = await import("../../src/server/ingest.ts");
      const old = await checkEntry(makeEntry(d, { title: "forged", capturedAt: "2099-01-01T00:00:00.000Z" }), { nowMs: Date.parse("2099-01-01T00:00:00Z") });
      if (!("row" in old)) throw new Error(old.reason);
      await srv.storage.putEntries(srv.project.id, [old.row], Number.MAX_SAFE_INTEGER);
      expect((await get(`/api/v1/entries/${d}`)).json.entry.title).toBe("forged");
      expect((await batch([makeEntry(d, { title: "genuine", capturedAt: new Date().toISOString() })])).status).toBe(200);
      expect((await get(`/api/v1/entries/${d}`)).json.entry.title).toBe("genuine");
    });

    test("changedFiles caps: an entry keeps its first 1,000 paths (and says how many it had); a batch over 10,000 is refused whole", async () => {
      srv = await testServer(backend);
      const big = hash("many files");
      const paths = Array.from({ length: 1500 }, (_, i) => `src/gen/file${String(i).padStart(4, "0")}.ts`);
      const r = await batch([makeEntry(big, { changedFiles: paths })]);
      expect(r.status).toBe(200);
      expect(r.json.trimmed).toEqual([{ index: 0, commitHash: big, changedFiles: 1500, kept: 1000 }]);
      const e = (await get(`/api/v1/entries/${big}`)).json.entry;
      expect(e.changedFiles).toEqual(paths.slice(0, 1000));
      expect(e.changedFilesTotal).toBe(1500);
      expect((await get("/api/v1/files?path=src/gen/file0999.ts")).json.entries.length).toBe(1);
      expect((await get("/api/v1/files?path=src/gen/file1000.ts")).json.entries.length).toBe(0);
      // 11 entries of 1,000 files: 11,000 in one batch
      const tooMany = Array.from({ length: 11 }, (_, i) => makeEntry(hash(`flood ${i}`), { changedFiles: paths.slice(0, 1000) }));
      const refused = await batch(tooMany);
      expect(refused.status).toBe(400);
      expect(refused.json.error).toBe("at most 10000 changed files per batch (each entry counted up to 1000), not 11000; send fewer entries per request");
      const longPath = await batch([makeEntry(hash("long path"), { changedFiles: [`${"d/".repeat(2100)}f.ts`] })]);
      expect(longPath.status).toBe(400);
      expect(longPath.json.rejected[0].reason).toBe("changedFiles: a path is longer than 4096 characters");
      expect(await count()).toBe(1);
    });

    test("a forged client's secrets (bypassing the client's redactor) are stored redacted, in entries and transcripts", async () => {
      srv = await testServer(backend);
      const c = hash("forged secret");
      // built at run time so that no secret-shaped literal sits in the repository
      const ghp = `ghp_${"0123456789abcdefghijABCDEFGHIJ012345"}`;
      const aws = ["AKIA", "QWERTYUIOPASDF23"].join("");
      const r = await batch([
        makeEntry(c, {
          title: `Rotate ${ghp}`,
          intent: `The key ${aws} leaked`,
          // plain, behind JSON escapes, and on a line that is not JSON
          conversationSnippet: `${line("user", `use token ${ghp} please`)}{"role":"assistant","content":"\\u0067${ghp.slice(1)}"}\nnot json ${aws}\n`,
          claudeSessionId: "s-secret",
        }),
      ]);
      expect(r.status).toBe(200);
      const e = (await get(`/api/v1/entries/${c}`)).json.entry;
      const text = JSON.stringify(e);
      expect(text).not.toContain(ghp);
      expect(text).not.toContain(aws);
      expect(e.title).toContain("<REDACTED:");
      expect(e.conversationSnippet).toContain("<REDACTED:");
      expect(e.conversationSnippet).not.toContain(ghp.slice(1));
      expect(e.conversationSnippet.split("\n").length).toBe(4);
      // nor can the secret be found by searching for it
      expect((await get(`/api/v1/timeline?q=${ghp}`)).json.entries).toEqual([]);
      const t = line("user", `here: ${ghp}`) + line("assistant", `and ${aws}`);
      expect((await call("PUT", "/api/v1/work-sessions/prompt", { body: { claudeSessionId: "s-secret", content: t } })).status).toBe(200);
      const stored = (await get("/api/v1/sessions/s-secret")).json.transcript as string;
      expect(stored).not.toContain(ghp);
      expect(stored).not.toContain(aws);
      expect(stored.split("\n").filter(Boolean).map((l) => JSON.parse(l).role)).toEqual(["user", "assistant"]);
    });

    test("the single-entry route and the session transcript route store what they get", async () => {
      srv = await testServer(backend);
      const c = hash("one");
      expect((await call("POST", "/api/v1/captures", { body: makeEntry(c, { claudeSessionId: "s-one" }) })).status).toBe(200);
      const t1 = line("user", "first") + line("assistant", "done");
      expect((await call("PUT", "/api/v1/work-sessions/prompt", { body: { claudeSessionId: "s-one", content: t1 } })).status).toBe(200);
      const t2 = t1 + line("user", "more");
      expect((await call("PUT", "/api/v1/work-sessions/prompt", { body: { claudeSessionId: "s-one", content: t2 } })).status).toBe(200);
      const s = await get("/api/v1/sessions/s-one");
      expect(s.json.transcript).toBe(t2);
      expect(s.json.entries.map((e: any) => e.commitHash)).toEqual([c]);
      expect((await call("PUT", "/api/v1/work-sessions/prompt", { body: { claudeSessionId: "../x", content: "" } })).status).toBe(400);
    });

    test("hostile bodies get a 4xx with a reason, store nothing, and the server stays up", async () => {
      srv = await testServer(backend);
      const c = hash("hostile");
      const cases: [string, Promise<{ status: number; json: any }>][] = [
        ["invalid JSON", call("POST", "/api/v1/captures/batch", { raw: '{"captures": [' })],
        ["captures not a list", batch("x" as any)],
        ["wrong types", batch([{ ...makeEntry(c), changedFiles: "src/a.ts", continuation: "yes" }])],
        ["10 MB string", batch([makeEntry(c, { intent: "x".repeat(10 * 1024 * 1024) })])],
        ["10,000 entries", batch(Array.from({ length: 10_000 }, (_, i) => makeEntry(hash(`many ${i}`), { conversationSnippet: "" })))],
        ["NUL byte", batch([makeEntry(c, { title: "a\u0000b" })])],
        ["NUL in a transcript", call("PUT", "/api/v1/work-sessions/prompt", { body: { claudeSessionId: "s", content: "a\u0000" } })],
        ["not JSON content type", call("POST", "/api/v1/captures/batch", { raw: "captures=1", type: "application/x-www-form-urlencoded" })],
        ["array body", call("POST", "/api/v1/captures", { body: [makeEntry(c)] })],
      ];
      for (const [name, p] of cases) {
        const r = await p;
        expect({ name, status: r.status >= 400 && r.status < 500 }).toEqual({ name, status: true });
        expect(typeof r.json.error).toBe("string");
        expect(r.json.error.length).toBeGreaterThan(5);
      }
      expect(await count()).toBe(0);
      expect((await batch([makeEntry(c)])).status).toBe(200);
      expect(await count()).toBe(1);
    });

    test("keys: none, unknown and revoked keys get 401; keys of another project see nothing of this one", async () => {
      srv = await testServer(backend);
      expect((await batch([makeEntry(hash("k"))], null)).status).toBe(401);
      expect((await batch([makeEntry(hash("k"))], "afk_wrong")).status).toBe(401);
      expect((await get("/api/v1/timeline", "afk_wrong")).status).toBe(401);
      const other = await createProject(srv.storage, "other");
      await batch([makeEntry(hash("mine"))]);
      expect((await get("/api/v1/timeline", other.key)).json.entries).toEqual([]);
      const second = await createKey(srv.storage, "demo", "laptop");
      expect((await get("/api/v1/timeline", second.key)).json.entries.length).toBe(1);
      await revokeKey(srv.storage, second.keyId);
      expect((await get("/api/v1/timeline", second.key)).status).toBe(401);
      // the key never appears in the request log
      expect(srv.lines.join("\n")).not.toContain(srv.key);
      expect(srv.lines.some((l) => /POST \/api\/v1\/captures\/batch 401 [\d.]+ms$/.test(l))).toBe(true);
    });

    test("repeated failures from one address are slowed down: 429 with Retry-After; a good key still passes", async () => {
      srv = await testServer(backend, { failureLimit: 3 });
      for (let i = 0; i < 3; i++) expect((await get("/api/v1/timeline", `afk_bad${i}`)).status).toBe(401);
      const slowed = await get("/api/v1/timeline", "afk_bad");
      expect(slowed.status).toBe(429);
      expect(Number(slowed.headers.get("retry-after"))).toBeGreaterThan(0);
      expect((await get("/api/v1/timeline", srv.key)).status).toBe(200);
    });

    test("a client sending too fast gets 429 with Retry-After after its burst", async () => {
      srv = await testServer(backend, { rateLimit: 1 });
      const statuses: number[] = [];
      for (let i = 0; i < 15; i++) statuses.push((await call("POST", "/api/v1/captures", { body: makeEntry(hash(`r${i}`)) })).status);
      expect(statuses.filter((s) => s === 200).length).toBeGreaterThanOrEqual(10);
      expect(statuses).toContain(429);
    });

    test("8 clients × 5 batches of 100 at once, overlapping: every entry stored exactly once", async () => {
      srv = await testServer(backend);
      const clients = 8;
      const batches = 5;
      const all = new Set<string>();
      await Promise.all(
        Array.from({ length: clients }, async (_, c) => {
          for (let b = 0; b < batches; b++) {
            // half of each batch is shared with the next client: the same commits arrive from two clients at once
            const entries = Array.from({ length: 100 }, (_, i) => {
              const h = hash(i < 50 ? `c${c} b${b} ${i}` : `c${(c + 1) % clients} b${b} ${i - 50}`);
              all.add(h);
              return makeEntry(h, { claudeSessionId: `client-${c}`, groupRootId: null });
            });
            const r = await batch(entries);
            expect(r.status).toBe(200);
          }
        }),
      );
      expect(all.size).toBe(clients * batches * 50);
      expect(await count()).toBe(all.size);
    });
  });

  describe(`${backend.name}: grouping on the server (SPEC §5)`, () => {
    const snip = (...lines: [string, string][]) => lines.map(([r, c]) => line(r, c)).join("");
    const auto = (h: string, at: string, over: Partial<Entry> = {}) => {
      const e: Record<string, unknown> = makeEntry(h, { claudeSessionId: "g", committedAt: at, capturedAt: at, ...over });
      delete e.groupRootId;
      return e;
    };
    const groupOf = async (h: string) => (await get(`/api/v1/entries/${h}`)).json.entry.groupRootId;

    test("entries without groupRootId are grouped from the session's previous entry, also when the root arrives late", async () => {
      srv = await testServer(backend);
      const [a, b, c, d] = ["A", "B", "C", "D"].map(hash) as [string, string, string, string];
      // b (the agent committing on its own) and d (an answer to a question) arrive before a
      await batch([
        auto(b, "2026-01-01T00:02:00Z", { conversationSnippet: snip(["assistant", "next part"]) }),
        auto(d, "2026-01-01T00:04:00Z", { conversationSnippet: snip(["user", "yes, option 2"]), continuation: true }),
      ]);
      expect(await groupOf(b)).toBeNull(); // no previous entry yet: a root for now
      await batch([auto(a, "2026-01-01T00:01:00Z", { conversationSnippet: snip(["user", "do A"]) })]);
      expect(await groupOf(b)).toBe(a);
      // c: a new request in plain text starts a group; d, the answer to c's question, joins c
      await batch([auto(c, "2026-01-01T00:03:00Z", { conversationSnippet: snip(["user", "now do C"]) })]);
      expect(await groupOf(a)).toBeNull();
      expect(await groupOf(b)).toBe(a);
      expect(await groupOf(c)).toBeNull();
      expect(await groupOf(d)).toBe(c);
      const group = (await get(`/api/v1/entries/${b.slice(0, 8)}`)).json.group.map((e: any) => e.commitHash);
      expect(group).toEqual([a, b]);
    });

    test("one batch of several sessions, their entries interleaved in time, groups each session on its own", async () => {
      srv = await testServer(backend);
      const hashes = Array.from({ length: 12 }, (_, i) => hash(`interleaved ${i}`));
      // sessions s0, s1, s2 take turns, a minute apart; requests and the agent's own commits alternate, s1 starting
      // with one of the agent's: the first of a session is a root whatever the other sessions hold
      const request = (i: number) => (Math.floor(i / 3) + (i % 3)) % 2 === 0;
      const entries = hashes.map((h, i) =>
        auto(h, new Date(Date.UTC(2026, 0, 1, 0, i)).toISOString(), {
          claudeSessionId: `s${i % 3}`,
          conversationSnippet: request(i) ? snip(["user", `task ${i}`]) : snip(["assistant", "more"]),
        }),
      );
      await batch(entries.slice(6));
      await batch(entries.slice(0, 6));
      const want = hashes.map((_, i) => (i < 3 || request(i) ? null : request(i - 3) ? hashes[i - 3]! : null));
      expect(await Promise.all(hashes.map(groupOf))).toEqual(want);
    });

    test("an older capture in a batch, which the server keeps its newer version of, does not group the batch's entries", async () => {
      srv = await testServer(backend);
      const [a, b, c] = ["stale A", "stale B", "stale C"].map(hash) as [string, string, string];
      await batch([
        auto(a, "2026-01-01T00:01:00Z", { conversationSnippet: snip(["user", "do A"]) }),
        auto(b, "2026-01-01T00:02:00Z", { conversationSnippet: snip(["assistant", "more of A"]) }),
      ]);
      // b again as an older capture that reads as a new request: kept out, so c follows b in a's group
      const stale = { ...auto(b, "2026-01-01T00:02:00Z", { conversationSnippet: snip(["user", "do B"]) }), capturedAt: "2026-01-01T00:01:30Z" };
      await batch([stale, auto(c, "2026-01-01T00:03:00Z", { conversationSnippet: snip(["assistant", "still A"]) })]);
      expect(await Promise.all([a, b, c].map(groupOf))).toEqual([null, a, a]);
    });

    test("a groupRootId naming a root the server does not have yet is kept and resolves when the root arrives", async () => {
      srv = await testServer(backend);
      const [root, child] = [hash("root"), hash("child")];
      await batch([makeEntry(child, { groupRootId: root, committedAt: "2026-01-01T00:02:00Z" })]);
      let r = await get(`/api/v1/entries/${child}`);
      expect(r.json.entry.groupRootId).toBe(root);
      expect(r.json.group.map((e: any) => e.commitHash)).toEqual([child]);
      await batch([makeEntry(root, { committedAt: "2026-01-01T00:01:00Z" })]);
      r = await get(`/api/v1/entries/${child}`);
      expect(r.json.group.map((e: any) => e.groupId)).toEqual([root, root]);
      expect(r.json.group.map((e: any) => e.commitHash)).toEqual([root, child]);
    });
  });

  describe(`${backend.name}: read API`, () => {
    /** 30 entries over 3 sessions, 2 branches, tags and files; newest is n=29. */
    async function seed() {
      const hashes: string[] = [];
      const entries = Array.from({ length: 30 }, (_, n) => {
        const h = hash(`seed ${n}`);
        hashes.push(h);
        return makeEntry(h, {
          title: n === 7 ? "Parser handles unicode quotes" : `Change ${n}`,
          intent: n === 12 ? "Problem: the pager flickered. Solution: double buffering." : "Problem: x. Solution: y.",
          tag: (["FEATURE", "BUGFIX", "TEST"] as const)[n % 3],
          claudeSessionId: `sess-${["alpha", "beta", "gamma"][n % 3]}`,
          branch: n < 20 ? "main" : "feature/x",
          changedFiles: n % 5 === 0 ? ["src/core/a.ts", "README.md"] : [`src/web/f${n}.ts`],
          committedAt: new Date(Date.UTC(2026, 0, 1 + n)).toISOString(),
          capturedAt: new Date(Date.UTC(2026, 0, 1 + n, 1)).toISOString(),
          conversationSnippet: line("user", `request number ${n}`) + line("assistant", `done ${n}`),
        });
      });
      expect((await batch(entries)).status).toBe(200);
      return hashes;
    }

    test("timeline: newest first, pages by cursor without gaps or repeats, with the sessions of the page", async () => {
      srv = await testServer(backend);
      const hashes = await seed();
      const seen: string[] = [];
      let cursor: string | null = "";
      let pages = 0;
      while (cursor !== null) {
        const r = await get(`/api/v1/timeline?limit=7${cursor ? `&cursor=${cursor}` : ""}`);
        expect(r.status).toBe(200);
        for (const e of r.json.entries) {
          expect(e.conversationSnippet).toBeUndefined();
          expect(r.json.sessions[e.claudeSessionId]).toBeDefined();
        }
        seen.push(...r.json.entries.map((e: any) => e.commitHash));
        cursor = r.json.nextCursor;
        pages++;
      }
      expect(pages).toBe(5);
      expect(seen).toEqual([...hashes].reverse());
      const first = await get("/api/v1/timeline?limit=3");
      expect(first.json.sessions["sess-alpha"]).toEqual({
        firstRequest: "request number 0",
        agentType: "CLAUDE_CODE",
        branch: "feature/x",
        start: "2026-01-01T00:00:00.000Z",
        end: "2026-01-28T00:00:00.000Z",
        commits: 10,
      });
      expect((await get("/api/v1/timeline?cursor=bogus")).status).toBe(400);
      expect((await get("/api/v1/timeline?limit=0")).status).toBe(400);
    });

    test("timeline filters: tag, session prefix, file or directory, branch, text, since and until", async () => {
      srv = await testServer(backend);
      const hashes = await seed();
      const ids = async (qs: string) => (await get(`/api/v1/timeline?limit=200&${qs}`)).json.entries.map((e: any) => hashes.indexOf(e.commitHash));
      expect(await ids("tag=TEST")).toEqual([29, 26, 23, 20, 17, 14, 11, 8, 5, 2]);
      expect(await ids("tag=bugfix,TEST&session=sess-g")).toEqual([29, 26, 23, 20, 17, 14, 11, 8, 5, 2]);
      expect(await ids("session=sess-b&branch=feature/x")).toEqual([28, 25, 22]);
      expect(await ids("file=src/core")).toEqual([25, 20, 15, 10, 5, 0]);
      expect(await ids("file=src/core/a.ts")).toEqual([25, 20, 15, 10, 5, 0]);
      expect(await ids("file=src/web/f7.ts")).toEqual([7]);
      expect(await ids("file=src/c")).toEqual([]);
      expect(await ids("q=unicode%20parser")).toEqual([7]);
      expect(await ids("q=flicker")).toEqual([12]);
      expect(await ids("q=number%2019")).toEqual([19]);
      expect(await ids("since=2026-01-28T00:00:00Z")).toEqual([29, 28, 27]);
      expect(await ids("since=2026-01-02T00:00:00Z&until=2026-01-04T00:00:00Z")).toEqual([2, 1]);
      expect((await get("/api/v1/timeline?tag=CHORE")).status).toBe(400);
      expect((await get("/api/v1/timeline?since=someday")).status).toBe(400);
    });

    test("one entry by full or abbreviated hash, with its group root first; unknown and ambiguous prefixes", async () => {
      srv = await testServer(backend);
      const [root, second, third] = [hash("g1"), hash("g2"), hash("g3")];
      await batch([
        makeEntry(third, { groupRootId: root, committedAt: "2026-02-03T00:00:00Z" }),
        makeEntry(second, { groupRootId: root, committedAt: "2026-02-02T00:00:00Z" }),
        makeEntry(root, { committedAt: "2026-02-01T00:00:00Z", conversationSnippet: line("user", "group it") }),
      ]);
      const r = await get(`/api/v1/entries/${third.slice(0, 7)}`);
      expect(r.status).toBe(200);
      expect(r.json.entry.commitHash).toBe(third);
      expect(r.json.entry.conversationSnippet).toBeDefined();
      expect(r.json.group.map((e: any) => e.commitHash)).toEqual([root, second, third]);
      expect((await get(`/api/v1/entries/${"0".repeat(40)}`)).status).toBe(404);
      expect((await get("/api/v1/entries/xyz")).status).toBe(400);
      // two hashes sharing a prefix
      const twins: string[] = [];
      for (let i = 0; twins.length < 2; i++) {
        const h = hash(`twin ${i}`);
        if (h.startsWith("ab")) twins.push(h);
      }
      await batch(twins.map((h) => makeEntry(h)));
      expect((await get("/api/v1/entries/ab")).status).toBe(400); // fewer than 4 digits
      const common = twins[0]!.slice(0, 4) === twins[1]!.slice(0, 4);
      if (common) expect((await get(`/api/v1/entries/${twins[0]!.slice(0, 4)}`)).status).toBe(400);
      expect((await get(`/api/v1/entries/${twins[0]}`)).status).toBe(200);
    });

    test("one session: its transcript, its entries in commit order and where each commit cuts the transcript", async () => {
      srv = await testServer(backend);
      const [c1, c2] = [hash("s1"), hash("s2")];
      const d1 = line("user", "add login") + line("assistant", "added");
      const d2 = line("user", "now logout") + line("assistant", "done");
      const transcript = d1 + d2 + line("user", "thanks");
      await batch([
        makeEntry(c2, { claudeSessionId: "sess-cut", conversationSnippet: d2, committedAt: "2026-03-01T00:02:00Z" }),
        makeEntry(c1, { claudeSessionId: "sess-cut", conversationSnippet: d1, committedAt: "2026-03-01T00:01:00Z" }),
      ]);
      await call("PUT", "/api/v1/work-sessions/prompt", { body: { claudeSessionId: "sess-cut", content: transcript } });
      const r = await get("/api/v1/sessions/sess-cut");
      expect(r.json.sessionId).toBe("sess-cut");
      expect(r.json.transcript).toBe(transcript);
      expect(r.json.entries.map((e: any) => e.commitHash)).toEqual([c1, c2]);
      expect(r.json.cuts).toEqual([
        { commitHash: c1, afterLine: 2 },
        { commitHash: c2, afterLine: 4 },
      ]);
      expect((await get("/api/v1/sessions/nobody")).status).toBe(404);
    });

    test("commits of one second: one total order (committedAt, recordedAt, hash) in pages, sessions, groups and grouping", async () => {
      srv = await testServer(backend);
      // hashes in descending order recorded one after another: hash order is the opposite of commit order
      const same = Array.from({ length: 5 }, (_, i) => hash(`same second ${i}`)).sort().reverse();
      const earlier = hash("a second before");
      const entries = same.map((h, i) => {
        const { groupRootId: _, ...e } = makeEntry(h, {
          claudeSessionId: "sess-burst",
          committedAt: "2026-04-01T10:00:00Z",
          recordedAt: `2026-04-01T10:00:0${Math.floor(i / 2)}.${i % 2 ? 7 : 2}00Z`,
          capturedAt: "2026-04-01T10:05:00.000Z",
          conversationSnippet: i === 0 ? line("user", "do all five") : line("assistant", `part ${i}`),
        });
        return e;
      });
      // committed a second earlier, recorded last: the commit time decides first
      entries.push(makeEntry(earlier, { claudeSessionId: "sess-other", committedAt: "2026-04-01T09:59:59Z", recordedAt: "2026-04-01T10:00:09Z" }));
      expect((await batch([...entries].reverse())).status).toBe(200);
      const newestFirst = [...[...same].reverse(), earlier];
      const all = await get("/api/v1/timeline?limit=200");
      expect(all.json.entries.map((e: any) => e.commitHash)).toEqual(newestFirst);
      const paged: string[] = [];
      for (let cursor: string | null = ""; cursor !== null; ) {
        const r = await get(`/api/v1/timeline?limit=2${cursor ? `&cursor=${cursor}` : ""}`);
        paged.push(...r.json.entries.map((e: any) => e.commitHash));
        cursor = r.json.nextCursor;
      }
      expect(paged).toEqual(newestFirst);
      expect((await get("/api/v1/sessions/sess-burst")).json.entries.map((e: any) => e.commitHash)).toEqual(same);
      // grouped on the server in commit order: the request's first commit is the root of the other four
      expect(all.json.entries.slice(0, 5).map((e: any) => e.groupId)).toEqual(same.map(() => same[0]));
      expect((await get(`/api/v1/entries/${same[3]}`)).json.group.map((e: any) => e.commitHash)).toEqual(same);
    });

    test("a database from before the recorded time gets it from the stored entries when it migrates", async () => {
      srv = await testServer(backend);
      const made = Array.from({ length: 3 }, (_, i) => hash(`migrated ${i}`)).sort().reverse();
      const at = (i: number) => ({ committedAt: "2026-05-01T08:00:00Z", recordedAt: `2026-05-01T08:00:0${i + 1}.500Z` });
      await batch(made.map((h, i) => makeEntry(h, { claudeSessionId: "sess-old", ...at(i) })));
      await srv.stop();
      // back to the shape before migration 4: no recorded_ms, the old indexes
      const downgrade = [
        "DROP INDEX entries_by_time",
        "DROP INDEX entries_by_session",
        "ALTER TABLE entries DROP COLUMN recorded_ms",
        "CREATE INDEX entries_by_time ON entries (project_id, sort_ms DESC, commit_hash DESC)",
        "CREATE INDEX entries_by_session ON entries (project_id, session_id, sort_ms)",
        "DELETE FROM schema_migrations WHERE version = 4",
      ];
      if (backend.name === "sqlite") {
        const { Database } = await import("bun:sqlite");
        const db = new Database(srv.db.url);
        for (const stmt of downgrade) db.run(stmt);
        db.close();
      } else {
        const sql = new Bun.SQL(srv.db.url);
        for (const stmt of downgrade) await sql.unsafe(stmt);
        await sql.close();
      }
      const storage = await srv.db.open();
      try {
        const rows = await storage.timeline(srv.project.id, { limit: 10 });
        expect(rows.map((r) => r.commitHash)).toEqual([...made].reverse());
        expect(rows.map((r) => Number(r.recordedMs))).toEqual([3, 2, 1].map((s) => Date.parse(`2026-05-01T08:00:0${s}.500Z`)));
      } finally {
        await storage.close();
      }
      srv = undefined;
    });

    test("an untagged entry (tag null) is stored and counted as untagged, never as a kind of work", async () => {
      srv = await testServer(backend);
      const [plain, fix] = [hash("untagged"), hash("tagged")];
      const r = await batch([makeEntry(plain, { tag: null, summaryStatus: "pending" }), makeEntry(fix, { tag: "BUGFIX" })]);
      expect(r.status).toBe(200);
      expect((await get(`/api/v1/entries/${plain}`)).json.entry.tag).toBeNull();
      expect((await get("/api/v1/stats?days=3660")).json.perTag).toEqual({ UNTAGGED: 1, BUGFIX: 1 });
      expect((await get("/api/v1/timeline?tag=BUGFIX")).json.entries.map((e: any) => e.commitHash)).toEqual([fix]);
    });

    test("files and stats", async () => {
      srv = await testServer(backend);
      const hashes = await seed();
      const f = await get("/api/v1/files?path=src/core/");
      expect(f.json.path).toBe("src/core");
      expect(f.json.entries.map((e: any) => hashes.indexOf(e.commitHash))).toEqual([25, 20, 15, 10, 5, 0]);
      expect((await get("/api/v1/files")).status).toBe(400);
      const all = await get("/api/v1/stats?days=3660");
      expect(all.json.entries).toBe(30);
      expect(all.json.sessions).toBe(3);
      expect(all.json.perTag).toEqual({ FEATURE: 10, BUGFIX: 10, TEST: 10 });
      // every day of the window, a day without entries a zero
      expect(all.json.perDay.length).toBe(3660);
      expect(all.json.perDay.filter((d: any) => d.count > 0)).toHaveLength(30);
      expect(all.json.perDay.find((d: any) => d.count > 0)).toEqual({ day: "2026-01-01", count: 1 });
      expect(all.json.topFiles[0]).toEqual({ path: "README.md", count: 6 });
      // the default window (28 days) counts only its own entries: the seed is older
      const recent = await get("/api/v1/stats");
      expect(recent.json).toMatchObject({ entries: 0, sessions: 0, perTag: {}, topFiles: [] });
      expect(recent.json.perDay).toHaveLength(28);
      expect(recent.json.perDay.every((d: any) => d.count === 0)).toBe(true);
      expect((await get("/api/v1/stats?days=x")).status).toBe(400);
    });
  });

  describe(`${backend.name}: sign-in cookie`, () => {
    test("login under a public name sets the cookie, a second key adds its project, me and logout; the cookie works on another server process", async () => {
      srv = await testServer(backend);
      const other = await createProject(srv.storage, "other");
      await batch([makeEntry(hash("in demo"))]);
      const bad = await call("POST", "/api/v1/auth/login", { key: null, body: { key: "afk_nope" } });
      expect(bad.status).toBe(401);
      expect((await call("GET", "/api/v1/auth/me", { key: null })).status).toBe(401);
      const first = await call("POST", "/api/v1/auth/login", { key: null, body: { key: srv.key }, host: PUBLIC_HOST });
      expect(first.status).toBe(200);
      const set = first.headers.get("set-cookie")!;
      expect(set).toMatch(/^aiflare_session=[^;]+; HttpOnly; SameSite=Strict; Path=\//);
      expect(first.json.projects).toEqual([{ id: srv.project.id, name: "demo" }]);
      let cookie = set.split(";")[0]!;
      expect((await call("GET", "/api/v1/timeline", { key: null, cookie })).json.entries.length).toBe(1);
      const both = await call("POST", "/api/v1/auth/login", { key: null, body: { key: other.key }, cookie, host: PUBLIC_HOST });
      cookie = both.headers.get("set-cookie")!.split(";")[0]!;
      expect(both.json.projects.map((p: any) => p.name).sort()).toEqual(["demo", "other"]);
      expect((await call("GET", "/api/v1/timeline", { key: null, cookie })).status).toBe(400);
      expect((await call("GET", `/api/v1/timeline?project=${srv.project.id}`, { key: null, cookie })).json.entries.length).toBe(1);
      expect((await call("GET", `/api/v1/timeline?project=${other.project.id}`, { key: null, cookie })).json.entries.length).toBe(0);
      expect((await call("GET", "/api/v1/timeline?project=prj_unknown", { key: null, cookie })).status).toBe(404);
      // a cookie does not write
      expect((await call("POST", "/api/v1/captures/batch", { key: null, cookie, body: { captures: [] } })).status).toBe(403);
      // another server process on the same database accepts the cookie
      const storage2 = await srv.db.open();
      const second = await startServer({ host: "127.0.0.1", port: 0, storage: storage2, log: () => {} });
      extra.push({ stop: async () => (await second.stop(), await storage2.close()) });
      const me = await fetch(`${second.url}/api/v1/auth/me`, { headers: { cookie } });
      expect(((await me.json()) as any).projects.length).toBe(2);
      // a forged sign-in is refused; the one it replaced has ended
      expect((await call("GET", "/api/v1/auth/me", { key: null, cookie: `${cookie}x` })).status).toBe(401);
      expect((await call("GET", "/api/v1/auth/me", { key: null, cookie: set.split(";")[0]! })).status).toBe(401);
      // another site's page cannot sign a browser in or out, nor write
      const crossSite = await fetch(`${srv!.url}/api/v1/auth/login`, { method: "POST", headers: { origin: "https://evil.example", "content-type": "text/plain" }, body: JSON.stringify({ key: srv!.key }) });
      expect(crossSite.status).toBe(403);
      expect(crossSite.headers.get("set-cookie")).toBeNull();
      const plain = await fetch(`${srv!.url}/api/v1/auth/login`, { method: "POST", headers: { origin: srv!.url }, body: JSON.stringify({ key: srv!.key }) });
      expect(plain.status).toBe(200);
      const out = await call("POST", "/api/v1/auth/logout", { key: null, cookie });
      expect(out.headers.get("set-cookie")).toContain("Max-Age=0");
      // logout ends the sign-in on the server, on every process: the old cookie is refused
      expect((await call("GET", "/api/v1/auth/me", { key: null, cookie })).status).toBe(401);
      expect((await fetch(`${second.url}/api/v1/auth/me`, { headers: { cookie } })).status).toBe(401);
    });

    test("revoking a key ends every sign-in made with it, also one that holds other keys; other sign-ins stay", async () => {
      srv = await testServer(backend);
      const other = await createProject(srv.storage, "other");
      const signIn = async (key: string, cookie?: string) =>
        (await call("POST", "/api/v1/auth/login", { key: null, body: { key }, cookie, host: PUBLIC_HOST })).headers.get("set-cookie")!.split(";")[0]!;
      const both = await signIn(other.key, await signIn(srv.key));
      const demoOnly = await signIn(srv.key);
      const me = async (cookie: string) => (await call("GET", "/api/v1/auth/me", { key: null, cookie })).status;
      expect([await me(both), await me(demoOnly)]).toEqual([200, 200]);
      await revokeKey(srv.storage, other.keyId);
      expect([await me(both), await me(demoOnly)]).toEqual([401, 200]);
    });

    test("a sign-in lasts 30 days", async () => {
      let t = Date.parse("2026-03-01T00:00:00Z");
      const db = await backend.fresh();
      const storage = await db.open();
      const { key } = await createProject(storage, "clock");
      const handle = await createApp(storage, { now: () => new Date(t) });
      const login = await handle(new Request("http://x/api/v1/auth/login", { method: "POST", body: JSON.stringify({ key }) }));
      const cookie = login.headers.get("set-cookie")!.split(";")[0]!;
      const me = async () => (await handle(new Request("http://x/api/v1/auth/me", { headers: { cookie } }))).status;
      t += 29 * 86_400_000;
      expect(await me()).toBe(200);
      t += 2 * 86_400_000;
      expect(await me()).toBe(401);
      await storage.close();
    });

    test("reached by a loopback name, login answers the session in its body and sets no cookie: it is sent as a header", async () => {
      srv = await testServer(backend);
      const other = await createProject(srv.storage, "other");
      for (const host of [new URL(srv.url).host, "localhost:4180", "ui.localhost", "127.1.2.3:80", "[::1]:4180"]) {
        const res = await call("POST", "/api/v1/auth/login", { key: null, body: { key: srv.key }, host });
        expect(res.status).toBe(200);
        expect(res.json.session).toMatch(/^\S{20,}$/);
        // an old sign-in cookie of this name is cleared
        expect(res.headers.get("set-cookie")).toMatch(/^aiflare_session=; .*Max-Age=0/);
      }
      const first = await call("POST", "/api/v1/auth/login", { key: null, body: { key: srv.key } });
      let auth = { authorization: `Bearer ${first.json.session}` };
      expect((await call("GET", "/api/v1/auth/me", { key: null, headers: auth })).json.projects).toEqual([{ id: srv.project.id, name: "demo" }]);
      // a second key adds its project to the session the page sends
      const both = await call("POST", "/api/v1/auth/login", { key: null, body: { key: other.key }, headers: auth });
      auth = { authorization: `Bearer ${both.json.session}` };
      expect((await call("GET", "/api/v1/auth/me", { key: null, headers: auth })).json.projects.length).toBe(2);
      expect((await call("GET", "/api/v1/auth/me", { key: null, headers: { authorization: `Bearer ${both.json.session}x` } })).status).toBe(401);
      // a header session does not write either
      expect((await call("POST", "/api/v1/captures/batch", { key: null, headers: auth, body: { captures: [] } })).status).toBe(403);
      // behind a proxy, the name the browser used decides
      const proxied = await call("POST", "/api/v1/auth/login", { key: null, body: { key: srv.key }, headers: { "x-forwarded-host": PUBLIC_HOST } });
      expect(proxied.json.session).toBeUndefined();
      expect(proxied.headers.get("set-cookie")).toMatch(/^aiflare_session=[^;]+; HttpOnly; SameSite=Strict; Path=\/; Max-Age=[1-9]/);
    });

    test("paths outside /api are the dashboard's; unknown API paths and methods answer JSON errors", async () => {
      srv = await testServer(backend);
      expect((await get("/api/v1/nothing")).status).toBe(404);
      expect((await call("DELETE", "/api/v1/timeline")).status).toBe(405);
      expect((await call("GET", "/api/v1/captures/batch")).status).toBe(405);
      const page = await fetch(`${srv.url}/no-such-page`);
      expect(page.status).toBe(404);
    });
  });
}
