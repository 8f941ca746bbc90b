/**
 * One key flooding `aiflare serve` (the compiled binary) with batches at the caps, at its rate limit, while another
 * project's reads and writes are timed: they stay fast on SQLite and on PostgreSQL.
 */
import { afterEach, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { mkdtempSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { binary } from "../helpers.ts";
import { useBackends } from "../server/backends.ts";
import { makeEntry } from "../sync-fixtures.ts";
import { newProject, useServe } from "./serve-support.ts";

setDefaultTimeout(180_000);
const BACKENDS = useBackends();
beforeAll(() => {
  binary();
});

const percentile = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.ceil((p / 100) * xs.length) - 1]!;
const hash = (s: string) => new Bun.CryptoHasher("sha1").update(s).digest("hex");
const line = (role: string, content: string) => `${JSON.stringify({ role, content })}\n`;
const { serve } = useServe();
const cleanups: (() => void | Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

/** The largest batch the caps allow: 100 entries, 10,000 changed files in all, a body near the 8 MiB cap. */
function floodBody(round: number): string {
  const words = "the parser now keeps the offsets of every token so that errors point at the right column ";
  const captures = Array.from({ length: 100 }, (_, i) =>
    makeEntry(hash(`flood ${round} ${i}`), {
      claudeSessionId: `flood-${i % 10}`,
      changedFiles: Array.from({ length: 100 }, (_, f) => `src/generated/module${i}/file${f}.ts`),
      conversationSnippet: Array.from({ length: 40 }, (_, k) => line(k % 2 ? "assistant" : "user", `${k} ${words.repeat(18)}`)).join(""),
      capturedAt: new Date().toISOString(),
    }),
  );
  return JSON.stringify({ captures });
}

for (const backend of BACKENDS) {
  describe(`${backend.name}: a flood from one key`, () => {
    test("another project's requests stay fast (p99 goal 200 ms) while one key sends max-size batches at its rate limit", async () => {
      const db = (await backend.fresh()).url;
      const home = realpathSync(mkdtempSync(join(tmpdir(), "aiflare-flood-")));
      cleanups.push(() => rmSync(home, { recursive: true, force: true }));
      const floodKey = await newProject(db, home, "flood");
      const otherKey = await newProject(db, home, "other");
      // the default rate limit, 20 requests a second per key in bursts of 200: faster than the server can store the flood
      const server = await serve(db, home);
      const bodies = [floodBody(1), floodBody(2)];
      expect(bodies[0]!.length).toBeGreaterThan(6 * 1024 * 1024);
      expect(bodies[0]!.length).toBeLessThan(8 * 1024 * 1024);

      let measuring = true;
      const statuses: number[] = [];
      const flooder = async (s: number) => {
        for (let n = 0; measuring && n < 100; n++) {
          let r: Response;
          try {
            r = await fetch(`${server.url}/api/v1/captures/batch`, {
              method: "POST",
              headers: { "content-type": "application/json", "x-api-key": floodKey },
              body: bodies[(s + n) % 2],
            });
          } catch {
            // refused before its body was read (429): the server may close the connection under the upload
            statuses.push(0);
            await Bun.sleep(1000);
            continue;
          }
          statuses.push(r.status);
          const answer = (await r.json()) as { accepted?: number };
          if (r.status === 200) expect(answer.accepted).toBe(100);
          // at its rate limit: waits as long as the server says, and not longer
          if (r.status === 429) await Bun.sleep(Number(r.headers.get("retry-after") ?? "1") * 1000);
        }
      };
      const flood = Promise.all(Array.from({ length: 4 }, (_, s) => flooder(s)));
      while (!statuses.includes(200)) await Bun.sleep(20);
      const floodedBefore = statuses.filter((s) => s === 200).length;

      const ms: number[] = [];
      const timed = async (path: string, init: RequestInit = {}) => {
        const t0 = performance.now();
        const r = await fetch(`${server.url}${path}`, { ...init, headers: { "content-type": "application/json", "x-api-key": otherKey } });
        await r.text();
        ms.push(performance.now() - t0);
        expect(r.status).toBe(200);
      };
      // 300 requests, three every 120 ms at most: within the other key's own rate limit (bursts of 200, then 20/s)
      for (let i = 0; i < 100; i++) {
        const started = performance.now();
        const c = hash(`other ${i}`);
        const entry = makeEntry(c, { claudeSessionId: "other", conversationSnippet: line("user", `change ${i} ${"detail ".repeat(200)}`), capturedAt: new Date().toISOString() });
        await timed("/api/v1/captures/batch", { method: "POST", body: JSON.stringify({ captures: [entry] }) });
        await timed("/api/v1/timeline?limit=50");
        await timed(`/api/v1/entries/${c}`);
        await Bun.sleep(Math.max(0, 120 - (performance.now() - started)));
      }
      measuring = false;
      await flood;
      const floodedAfter = statuses.filter((s) => s === 200).length - floodedBefore;

      const p99 = percentile(ms, 99);
      console.log(`${backend.name}: other project ${ms.length} requests during the flood: p50 ${percentile(ms, 50).toFixed(1)} ms, p99 ${p99.toFixed(1)} ms; flood batches stored since the measure began ${floodedAfter}, answers ${[...new Set(statuses)].join(",")}`);
      // the flood was real: batches at the caps were being stored while the other project was measured
      expect(floodedAfter).toBeGreaterThanOrEqual(1);
      expect(statuses.every((s) => s === 200 || s === 429 || s === 0)).toBe(true);
      // the goal is 200 ms; twice that is the margin for a shared machine under load (before the caps and the
      // bounded writes, such a flood held every other request for seconds and this test never finished)
      expect(p99).toBeLessThanOrEqual(400);
      expect(await server.stop()).toBe(0);
    });
  });
}
