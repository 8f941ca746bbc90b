import { afterEach, describe, expect, test } from "bun:test";
import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { binary, tempRepo, type TempRepo } from "../helpers.ts";
import { fsckClean, manyCommits, timelinePaths } from "./capture-support.ts";

let repo: TempRepo | undefined;
afterEach(() => {
  repo?.cleanup();
  repo = undefined;
});

function lockFiles(dir: string): string[] {
  const out: string[] = [];
  const walk = (d: string) => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      if (e.isDirectory()) walk(join(d, e.name));
      else if (e.name.endsWith(".lock")) out.push(join(d, e.name));
    }
  };
  walk(dir);
  return out;
}

describe("concurrency and crashes", () => {
  test("8 processes x 25 captures of different commits, while git packs refs and updates others: 200 entries, fsck clean", async () => {
    repo = tempRepo();
    const bin = binary();
    const hashes = manyCommits(repo, 200);
    const workers = Array.from({ length: 8 }, (_, w) => {
      const mine = hashes.slice(w * 25, w * 25 + 25);
      const script = `for h in ${mine.join(" ")}; do "${bin}" capture --commit-hash "$h" --intent "w${w}" --claude-session-id s${w} >/dev/null || exit 1; done`;
      return Bun.spawn(["sh", "-c", script], { cwd: repo!.root, env: repo!.env, stderr: "pipe" });
    });
    let running = true;
    const noise = (async () => {
      let i = 0;
      while (running) {
        Bun.spawnSync(["git", "pack-refs", "--all"], { cwd: repo!.root, env: repo!.env });
        Bun.spawnSync(["git", "update-ref", "refs/heads/noise", hashes[i++ % 200]!], { cwd: repo!.root, env: repo!.env });
        await Bun.sleep(5);
      }
    })();
    const codes = await Promise.all(workers.map((p) => p.exited));
    running = false;
    await noise;
    expect(codes).toEqual(Array(8).fill(0));
    const paths = timelinePaths(repo);
    expect(paths).toHaveLength(200);
    expect(new Set(paths)).toEqual(new Set(hashes.map((h) => `entries/${h.slice(0, 2)}/${h.slice(2)}.json`)));
    // one commit per write
    expect(Number(repo.git("rev-list", "--count", "aiflare/timeline/v1"))).toBe(200);
    expect(lockFiles(join(repo.root, ".git", "refs"))).toEqual([]);
    expect(fsckClean(repo)).toBe(true);
  }, 120_000);

  test("SIGKILL at random points, at least 50 times: the ref stays valid, fsck stays clean, no earlier entry is lost", async () => {
    repo = tempRepo();
    const bin = binary();
    const hashes = manyCommits(repo, 121);
    // how long one capture takes here, to spread the kills over its whole life
    const t0 = performance.now();
    const first = Bun.spawnSync([bin, "capture", "--commit-hash", hashes[120]!, "--claude-session-id", "k"], { cwd: repo.root, env: repo.env });
    expect(first.exitCode).toBe(0);
    const span = Math.max(5, performance.now() - t0);
    const known = new Set(timelinePaths(repo));
    let killed = 0;
    for (let i = 0; i < 120 && killed < 50; i++) {
      const p = Bun.spawn([bin, "capture", "--commit-hash", hashes[i]!, "--intent", `k${i}`, "--claude-session-id", "k"], {
        cwd: repo.root,
        env: repo.env,
        stdout: "ignore",
        stderr: "ignore",
      });
      // within the first 70% of a capture's measured life, so most runs are still going when killed
      await Bun.sleep(Math.random() * span * 0.7);
      if (p.exitCode === null) killed++;
      p.kill("SIGKILL");
      await p.exited;
      const tip = repo.tryGit("rev-parse", "--verify", "aiflare/timeline/v1^{commit}");
      expect(tip.code).toBe(0);
      const now = new Set(timelinePaths(repo));
      for (const k of known) expect(now.has(k)).toBe(true);
      for (const n of now) known.add(n);
      if (i % 15 === 14) expect(fsckClean(repo)).toBe(true);
    }
    expect(killed).toBeGreaterThanOrEqual(50);
    // captures keep working afterwards (a lock left by a kill is recovered)
    const after = Bun.spawnSync([bin, "capture", "--commit-hash", hashes[0]!, "--intent", "after"], { cwd: repo.root, env: repo.env });
    expect(after.exitCode).toBe(0);
    expect(existsSync(join(repo.root, ".git", "refs", "heads", "aiflare", "timeline", "v1.lock"))).toBe(false);
    expect(fsckClean(repo)).toBe(true);
  }, 120_000);
});
