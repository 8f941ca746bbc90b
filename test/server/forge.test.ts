/** A project's forge link on the team server, against SQLite and a real PostgreSQL: set, read back, removed. */
import { describe, expect, test } from "bun:test";
import { createProject, setForgeUrl } from "../../src/server/admin.ts";
import { makeEntry } from "../sync-fixtures.ts";
import { hash, serverPerTest, useBackends, type TestServer } from "./backends.ts";

const BACKENDS = useBackends();
const server = serverPerTest();
let srv: TestServer | undefined;

async function entryAnswer(key: string, commit: string): Promise<any> {
  const res = await fetch(`${srv!.url}/api/v1/entries/${commit}`, { headers: { "x-api-key": key } });
  expect(res.status).toBe(200);
  return res.json();
}

for (const backend of BACKENDS) {
  describe(`${backend.name}: forge link per project`, () => {
    test("the entry answer links its commit when its project has a template, and says the patch is in the clones", async () => {
      srv = await server.start(backend);
      const sha = hash("forge");
      const post = await fetch(`${srv.url}/api/v1/captures/batch`, {
        method: "POST",
        headers: { "x-api-key": srv.key, "content-type": "application/json" },
        body: JSON.stringify({ captures: [makeEntry(sha)] }),
      });
      expect(post.status).toBe(200);
      const other = await createProject(srv.storage, "other");

      expect((await entryAnswer(srv.key, sha)).commit).toEqual({ show: `git show ${sha}`, forgeUrl: null, diff: null, diffMissing: "remote" });
      await setForgeUrl(srv.storage, "demo", "https://git.example/demo/commit/{sha}");
      await setForgeUrl(srv.storage, other.project.id, "https://git.example/other/commit/{sha}");
      expect((await entryAnswer(srv.key, sha)).commit.forgeUrl).toBe(`https://git.example/demo/commit/${sha}`);
      // set again: replaced, not added
      await setForgeUrl(srv.storage, "demo", "https://git.example/demo/-/commit/{sha}");
      expect((await entryAnswer(srv.key, sha)).commit.forgeUrl).toBe(`https://git.example/demo/-/commit/${sha}`);
      await expect(setForgeUrl(srv.storage, "demo", "ftp://git.example/{sha}")).rejects.toThrow("http:// or https://");
      await expect(setForgeUrl(srv.storage, "demo", "https://git.example/commit/")).rejects.toThrow("{sha}");
      await expect(setForgeUrl(srv.storage, "demo", "https://user:pw@git.example/{sha}")).rejects.toThrow("password");
      await setForgeUrl(srv.storage, "demo", "none");
      expect((await entryAnswer(srv.key, sha)).commit.forgeUrl).toBeNull();
      expect(await srv.storage.projectSetting(other.project.id, "forge_url")).toBe("https://git.example/other/commit/{sha}");
    });
  });
}
