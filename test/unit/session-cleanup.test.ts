import { afterEach, describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, rmSync, utimesSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { CLEANUP_EVERY_MS, staleCleanupDue } from "../../src/core/session-cleanup.ts";

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function root(): string {
  const dir = mkdtempSync(join(tmpdir(), "aiflare-cleanup-"));
  dirs.push(dir);
  mkdirSync(join(dir, ".context-capture"));
  return dir;
}

describe("staleCleanupDue", () => {
  test("due the first time, then not again within the hour, per agent", () => {
    const r = root();
    expect(staleCleanupDue(r, "codex")).toBe(true);
    expect(staleCleanupDue(r, "codex")).toBe(false);
    expect(staleCleanupDue(r, "claude")).toBe(true);
  });

  test("due again once the last look is an hour old, or dated an hour ahead (a clock set back)", () => {
    const r = root();
    const mark = join(r, ".context-capture", ".cleanup-codex");
    expect(staleCleanupDue(r, "codex")).toBe(true);
    const past = (Date.now() - CLEANUP_EVERY_MS - 60_000) / 1000;
    utimesSync(mark, past, past);
    expect(staleCleanupDue(r, "codex")).toBe(true);
    expect(staleCleanupDue(r, "codex")).toBe(false);
    const future = (Date.now() + 2 * CLEANUP_EVERY_MS) / 1000;
    utimesSync(mark, future, future);
    expect(staleCleanupDue(r, "codex")).toBe(true);
  });

  test("no .context-capture directory: due, and no error", () => {
    expect(staleCleanupDue("/nonexistent-dir-for-test", "codex")).toBe(true);
  });
});
