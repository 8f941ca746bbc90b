/** `git gc` running beside aiflare: it removes empty objects/xx directories under a writer; no entry may be lost. */
import { afterEach, expect, test } from "bun:test";
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { binary, tempRepo, type TempRepo } from "../helpers.ts";
import { fsckClean, timelinePaths } from "./capture-support.ts";

let repo: TempRepo | undefined;
afterEach(() => {
  repo?.cleanup();
  repo = undefined;
});

/** `n` commits on a side branch, made with git fast-import; their hashes. */
function manyCommits(r: TempRepo, n: number): string[] {
  let stream = "";
  for (let i = 0; i < n; i++) {
    const data = `file ${i}\n`;
    const msg = `feat: change ${i}\n`;
    stream += `commit refs/heads/many\ncommitter Dev <dev@example.com> ${1700000000 + i} +0000\ndata ${msg.length}\n${msg}`;
    if (i === 0) stream += "from refs/heads/main\n";
    stream += `M 100644 inline f${i}.txt\ndata ${data.length}\n${data}\n`;
  }
  const imp = Bun.spawnSync(["git", "fast-import", "--quiet"], { cwd: r.root, env: r.env, stdin: Buffer.from(stream) });
  if (imp.exitCode !== 0) throw new Error(imp.stderr.toString());
  return r.git("rev-list", "--max-count", String(n), "many").split("\n");
}

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
