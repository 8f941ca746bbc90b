/**
 * The dashboard benchmarks' history: `n` entries in sessions of 20, three in four nested under their group's root,
 * a minute apart, written to a repository's timeline branch (and, for the team server, sent as capture batches).
 */
import { join } from "node:path";
import { testEnv } from "../test/helpers.ts";
import { convo, fakeHash, makeEntry, writeTimeline } from "../test/timeline-fixture.ts";
import { tempDir } from "./lib.ts";

/** The entries, oldest first. */
export function dashboardEntries(n: number) {
  const start = Date.UTC(2026, 9, 1);
  return Array.from({ length: n }, (_, i) => {
    const session = Math.floor(i / 20);
    const root = i % 4 === 0 ? null : fakeHash(i - (i % 4));
    return makeEntry({
      commitHash: fakeHash(i),
      title: `Change ${i}: ${["add", "fix", "tidy", "test"][i % 4]} the ${["parser", "exporter", "login", "cache"][i % 7 % 4]}`,
      tag: (["FEATURE", "BUGFIX", "REFACTORING", "TEST", "DOCS"] as const)[i % 5],
      claudeSessionId: `bench-session-${session}`,
      groupRootId: root,
      changedFiles: [`src/mod${i % 50}/file${i % 13}.ts`],
      capturedAt: new Date(start + i * 60_000).toISOString(),
      conversationSnippet: root ? "" : convo(["user", `Request ${i}: please change the ${i % 7} module`], ["assistant", "Done."]),
      intent: `Why change ${i}.`,
    });
  });
}

/** Writes `entries` to the timeline branch of the repository at `root`, in commits of 2,500. */
export function writeDashboardTimeline(root: string, env: Record<string, string>, entries: ReturnType<typeof dashboardEntries>): void {
  for (let i = 0; i < entries.length; i += 2500) writeTimeline(root, env, { entries: entries.slice(i, i + 2500) });
}

/** An empty repository (branch main) in a temp dir, with its own HOME: the dir (to remove), root and environment. */
export function benchRepo(): { dir: string; home: string; root: string; env: Record<string, string> } {
  const dir = tempDir();
  const home = join(dir, "home");
  const root = join(dir, "repo");
  Bun.spawnSync(["mkdir", "-p", home, root]);
  const env = testEnv(home);
  Bun.spawnSync(["git", "init", "-q", "-b", "main"], { cwd: root, env });
  return { dir, home, root, env };
}
