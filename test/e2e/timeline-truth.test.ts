/** The timeline tells the truth in the terminal: one order of commits, honest tags, consistent arguments. */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { binary, runBin, tempRepo, type TempRepo } from "../helpers.ts";
import { convo, makeEntry, writeTimeline } from "../timeline-fixture.ts";

describe("one order of commits (committedAt, recordedAt, commit hash)", () => {
  let repo: TempRepo;
  /** five commits of one second, in the order they were made */
  let made: string[];
  beforeAll(() => {
    binary();
    repo = tempRepo();
    const hashes = Array.from({ length: 5 }, (_, i) => repo.commit(`part ${i}`));
    // recorded in descending hash order, each more than a second after the commit (a late capture or an import):
    // neither the hash nor the order the index happens to read them in gives the commit order
    made = [...hashes].sort().reverse();
    writeTimeline(repo.root, repo.env, {
      entries: made.map((commitHash, i) =>
        makeEntry({
          commitHash,
          title: `Part ${i}`,
          groupRootId: i === 0 ? null : made[0]!,
          committedAt: "2026-11-29T10:00:00.000Z",
          recordedAt: `2026-11-29T10:00:0${2 + i}.000Z`,
          capturedAt: "2026-11-29T10:30:00.000Z",
          conversationSnippet: i === 0 ? convo(["user", "do it in five parts"]) : convo(["assistant", `part ${i}`]),
        }),
      ),
    });
  });
  afterAll(() => repo.cleanup());

  test("history list --json: newest first by recordedAt within the second", async () => {
    const r = await runBin(["history", "list", "--json"], { cwd: repo.root, env: repo.env });
    expect(r.code).toBe(0);
    expect((JSON.parse(r.stdout) as { commitHash: string }[]).map((e) => e.commitHash)).toEqual([...made].reverse());
  });

  test("history list: the group in commit order under its root; history show lists the group the same way", async () => {
    const r = await runBin(["history", "list"], { cwd: repo.root, env: repo.env });
    expect(r.code).toBe(0);
    const titles = r.stdout.split("\n").flatMap((l) => /Part \d/.exec(l)?.[0] ?? []);
    expect(titles).toEqual(["Part 0", "Part 1", "Part 2", "Part 3", "Part 4"]);
    const show = await runBin(["history", "show", made[0]!], { cwd: repo.root, env: repo.env });
    expect(show.code).toBe(0);
    expect(show.stdout.split("\n").flatMap((l) => /Part \d/.exec(l)?.[0] ?? [])).toEqual(["Part 0", "Part 0", "Part 1", "Part 2", "Part 3", "Part 4"]);
  });
});
