/** The entry page's diff stat from `git show --numstat -z`, and a directory's files merged across renames. */
import { describe, expect, test } from "bun:test";
import { parseNumstat } from "../../src/core/dashboard/commit.ts";
import { mergedFiles } from "../../src/core/dashboard/api.ts";
import type { GitCommit } from "../../src/core/history/why.ts";

describe("parseNumstat", () => {
  const cases: [string, string, ReturnType<typeof parseNumstat>][] = [
    ["a change", "3\t1\tsrc/a.ts\0", [{ path: "src/a.ts", added: 3, removed: 1 }]],
    ["a binary file", "-\t-\timg/logo.png\0", [{ path: "img/logo.png", added: null, removed: null }]],
    ["a rename", "1\t0\t\0src/old.ts\0src/new dir/new.ts\0", [{ path: "src/new dir/new.ts", from: "src/old.ts", added: 1, removed: 0 }]],
    ["a name with a tab", "2\t2\tdocs/a\tb.md\0", [{ path: "docs/a\tb.md", added: 2, removed: 2 }]],
    [
      "several, after git's leading newline",
      "\n1\t1\ta\0" + "0\t0\t\0b\0c\0" + "5\t0\td\0",
      [
        { path: "a", added: 1, removed: 1 },
        { path: "c", from: "b", added: 0, removed: 0 },
        { path: "d", added: 5, removed: 0 },
      ],
    ],
    ["nothing", "", []],
  ];
  for (const [name, text, want] of cases) test(name, () => expect(parseNumstat(text)).toEqual(want));
});

describe("mergedFiles", () => {
  const commit = (changes: GitCommit["changes"]): GitCommit => ({ commitHash: "0".repeat(40), subject: "", author: "", dateMs: 0, changes });
  test("a file renamed twice is one file under its last name; others stay apart", () => {
    // newest first, as git lists them
    const files = mergedFiles([
      commit([{ status: "M", path: "src/c.ts" }]),
      commit([{ status: "R", from: "src/b.ts", path: "src/c.ts" }, { status: "A", path: "src/other.ts" }]),
      commit([{ status: "R", from: "src/a.ts", path: "src/b.ts" }]),
      commit([{ status: "A", path: "src/a.ts" }]),
    ]);
    expect(files).toEqual([
      { path: "src/c.ts", formerPaths: ["src/b.ts", "src/a.ts"], commits: 4 },
      { path: "src/other.ts", formerPaths: [], commits: 1 },
    ]);
  });
  test("a file whose history starts at a rename still names its former path", () => {
    expect(mergedFiles([commit([{ status: "R", from: "lib/x.ts", path: "src/x.ts" }])])).toEqual([{ path: "src/x.ts", formerPaths: ["lib/x.ts"], commits: 1 }]);
  });
});

describe("commitDiff", () => {
  test("a real commit's stat and patch; a commit the repository lacks is null", async () => {
    const { tempRepo } = await import("../helpers.ts");
    const { commitDiff } = await import("../../src/core/dashboard/commit.ts");
    const repo = tempRepo();
    try {
      const sha = repo.commit("add", { "a.txt": "one\ntwo\n" });
      const diff = await commitDiff(repo.root, sha);
      expect(diff?.stat).toEqual([{ path: "a.txt", added: 2, removed: 0 }]);
      expect(diff?.patch).toContain("+two");
      expect(diff?.patchTruncated).toBe(false);
      expect(await commitDiff(repo.root, "1".repeat(40))).toBeNull();
    } finally {
      repo.cleanup();
    }
  });
});

describe("the file answer of aiflare ui", () => {
  test("a path is a path: pathspec magic finds nothing instead of failing", async () => {
    const { tempRepo } = await import("../helpers.ts");
    const { answerLocalApi } = await import("../../src/core/dashboard/api.ts");
    const repo = tempRepo();
    try {
      const at = { root: repo.root, commonDir: `${repo.root}/.git` };
      for (const path of [":(glob)**", ":!README.md"]) {
        const res = (await answerLocalApi(new URL(`http://127.0.0.1/api/v1/files?path=${encodeURIComponent(path)}`), at))!;
        expect(res.status).toBe(200);
        expect(((await res.json()) as { commits: unknown[] }).commits).toEqual([]);
      }
      const readme = (await answerLocalApi(new URL("http://127.0.0.1/api/v1/files?path=README.md"), at))!;
      expect(((await readme.json()) as { commits: { subject: string }[] }).commits.map((c) => c.subject)).toEqual(["initial commit"]);
    } finally {
      repo.cleanup();
    }
  });
});
