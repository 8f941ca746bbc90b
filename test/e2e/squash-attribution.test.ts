/**
 * Squash merges' line attribution, measured on 24 squashes replayed from this repository's own history (see
 * test/squash-attribution.ts): every agent's line names the part that wrote it, no person's line names an agent's,
 * and the fingerprint that makes it possible keeps an entry of ~5 KB within 15% more.
 */
import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { testEnv } from "../helpers.ts";
import { measureAttribution } from "../squash-attribution.ts";

const home = realpathSync(mkdtempSync(join(tmpdir(), "aiflare-attribution-home-")));
afterAll(() => rmSync(home, { recursive: true, force: true }));

test("24 squashes of real commits: 100% of agents' lines named right, no person's line given an agent's why", async () => {
  const a = await measureAttribution(testEnv(home), 24);
  expect(a.squashes).toBeGreaterThanOrEqual(20);
  expect(a.agentLines).toBeGreaterThan(1000);
  expect(a.humanLines).toBeGreaterThan(300);
  expect(a.wrong).toEqual([]);
  expect(a.agentRight).toBe(a.agentLines);
  expect(a.humanWrong).toBe(0);
  expect(Math.max(...a.growth)).toBeLessThanOrEqual(0.15);
});
