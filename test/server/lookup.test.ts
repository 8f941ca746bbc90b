/** A teammate's clone asks the team server for the entries of commits it has no entry for (why, recall, pull). */
import { describe, expect, test } from "bun:test";
import { makeEntry } from "../sync-fixtures.ts";
import { hash, serverPerTest, useBackends } from "./backends.ts";

const BACKENDS = useBackends();
const server = serverPerTest();
const call = server.call;

for (const backend of BACKENDS) {
  describe(`${backend.name}: entries by commit`, () => {
    test("answers the whole entries of the commits it holds, and nothing for the others", async () => {
      await server.start(backend);
      const [a, b, none] = [hash("a"), hash("b"), hash("none")];
      const captures = [makeEntry(a, { title: "part A", conversationSnippet: '{"role":"user","content":"make A"}\n' }), makeEntry(b, { title: "part B" })];
      expect((await call("POST", "/api/v1/captures/batch", { captures })).status).toBe(200);
      const r = await call("GET", `/api/v1/entries?commits=${a},${none},${b.toUpperCase()}`);
      expect(r.status).toBe(200);
      const byHash = new Map(r.json.entries.map((e: any) => [e.commitHash, e]));
      expect([...byHash.keys()].sort()).toEqual([a, b].sort());
      expect((byHash.get(a) as any).title).toBe("part A");
      expect((byHash.get(a) as any).conversationSnippet).toContain("make A");
    });

    test("refuses abbreviated hashes and more than 100 commits", async () => {
      await server.start(backend);
      const short = await call("GET", `/api/v1/entries?commits=${hash("a").slice(0, 12)}`);
      expect(short.status).toBe(400);
      expect(short.json.error).toContain("full 40-hex");
      const many = Array.from({ length: 101 }, (_, i) => hash(String(i))).join(",");
      expect((await call("GET", `/api/v1/entries?commits=${many}`)).status).toBe(400);
      expect((await call("GET", "/api/v1/entries")).status).toBe(400);
    });
  });
}
