/** The team server keeps the links `aiflare sync` sends and answers a linked commit's entry page with its parts. */
import { describe, expect, test } from "bun:test";
import { makeEntry } from "../sync-fixtures.ts";
import { hash, serverPerTest, useBackends } from "./backends.ts";

const BACKENDS = useBackends();
const server = serverPerTest();
const call = server.call;

for (const backend of BACKENDS) {
  describe(`${backend.name}: links`, () => {
    test("a squash commit's entry page lists its parts; a link is replaced when sent again", async () => {
      await server.start(backend);
      const [a, b, squash] = [hash("part a"), hash("part b"), hash("squash")];
      expect((await call("POST", "/api/v1/captures/batch", { captures: [makeEntry(a, { title: "part A" }), makeEntry(b, { title: "part B" })] })).status).toBe(200);
      const link = (parts: string[]) => ({
        commitHash: squash,
        method: "squash",
        parts: parts.map((h) => ({ commitHash: h, method: "lines", lines: 4 })),
        coverage: 1,
        computedAt: "2026-01-01T00:00:00.000Z",
        extra: "dropped",
      });
      expect((await call("POST", "/api/v1/links/batch", { links: [link([a])] })).status).toBe(200);
      expect((await call("POST", "/api/v1/links/batch", { links: [link([a, b])] })).json.accepted).toBe(1);
      const page = await call("GET", `/api/v1/entries/${squash.slice(0, 10)}`);
      expect(page.status).toBe(200);
      expect(page.json.entry).toBeNull();
      expect(page.json.link.parts.map((p: any) => p.commitHash)).toEqual([a, b]);
      expect(page.json.link.extra).toBeUndefined();
      expect(page.json.parts.map((p: any) => p.title)).toEqual(["part A", "part B"]);
    });

    test("a malformed link is refused and nothing of the batch is stored", async () => {
      await server.start(backend);
      const r = await call("POST", "/api/v1/links/batch", { links: [{ commitHash: "nope", method: "squash", parts: [], coverage: 0, computedAt: "x" }] });
      expect(r.status).toBe(400);
      expect(r.json.error).toContain("link 0");
      expect((await call("GET", `/api/v1/entries/${hash("squash").slice(0, 10)}`)).status).toBe(404);
    });
  });
}
