/** `git gc` running beside aiflare: it removes empty objects/xx directories under a writer; no entry may be lost. */
import { afterEach, expect, test } from "bun:test";
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { binary, tempRepo, type TempRepo } from "../helpers.ts";
import { fsckClean, manyCommits, timelinePaths } from "./capture-support.ts";

let repo: TempRepo | undefined;
afterEach(() => {
  repo?.cleanup();
  repo = undefined;
});

test("4 processes x 20 captures while git gc runs in a loop: 80 entries, no failure, no temporary file left", async () => {
  repo = tempRepo();
  const r = repo;
  const bin = binary();
  const hashes = manyCommits(r, 80);
  let running = true;
  let gcs = 0;
  const gc = (async () => {
    while (running) {
      // packs loose objects and deletes them with their then-empty objects/xx directories
      const p = Bun.spawn(["git", "gc", "--quiet"], { cwd: r.root, env: r.env, stdout: "ignore", stderr: "ignore" });
      await p.exited;
      gcs++;
    }
  })();
  const workers = Array.from({ length: 4 }, (_, w) => {
    const mine = hashes.slice(w * 20, w * 20 + 20);
    const script = `for h in ${mine.join(" ")}; do "${bin}" capture --commit-hash "$h" --intent "w${w}" --claude-session-id s${w} >/dev/null || exit 1; done`;
    return Bun.spawn(["sh", "-c", script], { cwd: r.root, env: r.env, stderr: "pipe" });
  });
  const codes = await Promise.all(workers.map((p) => p.exited));
  const errors = await Promise.all(workers.map((p) => new Response(p.stderr).text()));
  running = false;
  await gc;
  expect({ codes, errors: errors.filter(Boolean) }).toEqual({ codes: [0, 0, 0, 0], errors: [] });
  expect(gcs).toBeGreaterThan(0);
  const paths = timelinePaths(r);
  expect(new Set(paths)).toEqual(new Set(hashes.map((h) => `entries/${h.slice(0, 2)}/${h.slice(2)}.json`)));
  expect(fsckClean(r)).toBe(true);
  const objects = join(r.root, ".git", "objects");
  const temps = readdirSync(objects).flatMap((d) => (/^[0-9a-f]{2}$/.test(d) ? readdirSync(join(objects, d)) : [])).filter((n) => n.startsWith("tmp_obj_"));
  expect(temps).toEqual([]);
}, 180_000);
