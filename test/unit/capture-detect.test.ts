import { describe, expect, test } from "bun:test";
import { findGitCommits, simpleCommands } from "../../src/core/capture/detect.ts";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { findNewCommits, parseReflog, reportedCommits, reportsNothingCommitted, toolOutput } from "../../src/core/capture/verify.ts";

const CWD = "/work/repo";
const HOME = "/home/dev";

describe("findGitCommits", () => {
  const cases: [string, string, { dir: string; amend: boolean }[]][] = [
    ["plain", `git commit -m "add thing"`, [{ dir: CWD, amend: false }]],
    ["quiet", `git commit -q -m x`, [{ dir: CWD, amend: false }]],
    ["-C dir", `git -C sub/pkg commit -m x`, [{ dir: `${CWD}/sub/pkg`, amend: false }]],
    ["-C absolute", `git -C /other/repo commit -am x`, [{ dir: "/other/repo", amend: false }]],
    ["add && commit", `git add -A && git commit -m "feat: x"`, [{ dir: CWD, amend: false }]],
    ["amend", `git commit --amend --no-edit`, [{ dir: CWD, amend: true }]],
    ["inside $( )", `echo "done: $(git commit -m x)"`, [{ dir: CWD, amend: false }]],
    ["bare $( )", `out=$(git commit -m x) && echo $out`, [{ dir: CWD, amend: false }]],
    ["backticks", "x=`git commit -m y`", [{ dir: CWD, amend: false }]],
    ["after cd", `cd packages/app && git commit -m y`, [{ dir: `${CWD}/packages/app`, amend: false }]],
    ["cd ~", `cd ~/proj && git commit -m y`, [{ dir: `${HOME}/proj`, amend: false }]],
    ["subshell cd", `(cd sub && git commit -m x)`, [{ dir: `${CWD}/sub`, amend: false }]],
    ["-c option", `git -c user.name=x -c core.editor=true commit -m y`, [{ dir: CWD, amend: false }]],
    ["env assignment", `GIT_AUTHOR_DATE=now git commit -m y`, [{ dir: CWD, amend: false }]],
    ["absolute git", `/usr/bin/git commit -m y`, [{ dir: CWD, amend: false }]],
    ["--no-pager", `git --no-pager commit -m y`, [{ dir: CWD, amend: false }]],
    ["two commits", `git add a; git commit -m a\ngit add b\ngit commit -m b`, [
      { dir: CWD, amend: false },
      { dir: CWD, amend: false },
    ]],
    [
      "heredoc message (Claude Code's usual form)",
      `git commit -m "$(cat <<'EOF'\nfix: thing (1) done)\n\ngit commit inside the body\nEOF\n)"`,
      [{ dir: CWD, amend: false }],
    ],
    ["commit-tree", `git commit-tree HEAD^{tree} -m x`, []],
    ["log --grep commit", `git log --grep commit`, []],
    ["echo double-quoted", `echo "git commit -m x"`, []],
    ["echo single-quoted", `echo 'git commit -m x'`, []],
    ["comment", `ls # git commit`, []],
    ["heredoc body", `cat <<EOF > notes.txt\ngit commit -m x\nEOF`, []],
    ["show path", `git show HEAD:commit`, []],
    ["status", `git status && git diff --stat`, []],
    ["commit as message", `git tag -m commit v1`, []],
  ];
  for (const [name, command, expected] of cases) {
    test(name, () => {
      expect(findGitCommits(command, CWD, HOME).map(({ dir, amend }) => ({ dir, amend }))).toEqual(expected);
    });
  }
  const others: [string, string, string[]][] = [
    ["merge", `git merge --no-ff feature -m "merge"`, ["merge"]],
    ["cherry-pick in -C dir", `git -C sub cherry-pick abc123`, ["cherry-pick"]],
    ["revert", `git revert --no-edit HEAD`, ["revert"]],
    ["am", `git am < patch.mbox`, ["am"]],
    ["merge --abort makes nothing", `git merge --abort`, []],
    ["rebase is left to post-rewrite", `git rebase -i main`, []],
  ];
  for (const [name, command, subs] of others) {
    test(name, () => expect(findGitCommits(command, CWD, HOME).map((i) => i.sub)).toEqual(subs));
  }
  test("a huge command line is read up to a bound", () => {
    const many = Array.from({ length: 100_000 }, () => "git commit -qm x").join("; ");
    const found = findGitCommits(many, CWD, HOME);
    expect(found.length).toBeGreaterThan(0);
    expect(found.length).toBeLessThanOrEqual(200);
  });
});

describe("simpleCommands", () => {
  test("splits on operators and keeps quoted words whole", () => {
    expect(simpleCommands(`a "b c" && d 'e;f' | g; h`)).toEqual([["a", "b c"], ["d", "e;f"], ["g"], ["h"]]);
  });
  test("line continuation joins words", () => {
    expect(simpleCommands("git \\\n  commit -m x")).toEqual([["git", "commit", "-m", "x"]]);
  });
});

describe("reflog and tool output", () => {
  test("parseReflog reads old, new, time and message", () => {
    const a = "a".repeat(40);
    const b = "b".repeat(40);
    const lines = parseReflog(`${a} ${b} Dev <d@x> 1700000000 +0100\tcommit (amend): fix it\nbroken line\n`);
    expect(lines).toEqual([{ old: a, new: b, time: 1700000000, message: "commit (amend): fix it" }]);
  });
  const outputs: [string, string[]][] = [
    ["[main 1a2b3c4] feat: x\n 1 file changed", ["1a2b3c4"]],
    ["[main (root-commit) abcdef0] init", ["abcdef0"]],
    ["[detached HEAD 0123abc] wip", ["0123abc"]],
    ["[feat/x-y 89abcde] one\n[feat/x-y 1234567] two", ["89abcde", "1234567"]],
    ["On branch main\nnothing to commit, working tree clean", []],
    ["see [note] here", []],
  ];
  for (const [out, shas] of outputs) {
    test(`reportedCommits ${JSON.stringify(out.slice(0, 24))}`, () => expect(reportedCommits(out)).toEqual(shas));
  }
  test("nothing-to-commit reports", () => {
    expect(reportsNothingCommitted("On branch main\nnothing to commit, working tree clean")).toBe(true);
    expect(reportsNothingCommitted('no changes added to commit (use "git add")')).toBe(true);
    expect(reportsNothingCommitted("[main 1a2b3c4] x")).toBe(false);
  });
  test("toolOutput reads Claude Code's stdout/stderr and plain strings", () => {
    expect(toolOutput({ stdout: "a", stderr: "b", interrupted: false })).toBe("a\nb");
    expect(toolOutput("plain")).toBe("plain");
    expect(toolOutput(undefined)).toBe("");
  });
});

describe("findNewCommits reads the reflog from its end", () => {
  const hex = (n: number) => n.toString(16).padStart(40, "0");
  /** A worktree whose HEAD reflog holds `lines` (`[time, message]`, oldest first), each commit after the one before. */
  function withReflog(lines: [number, string][], fn: (repo: { root: string; gitDir: string; commonDir: string }) => Promise<void>) {
    const root = mkdtempSync(join(tmpdir(), "aiflare-reflog-"));
    const gitDir = join(root, ".git");
    mkdirSync(join(gitDir, "logs"), { recursive: true });
    const text = lines.map(([t, m], i) => `${hex(i)} ${hex(i + 1)} Dev Eloper <dev@example.com> ${t} +0100\t${m}\n`).join("");
    writeFileSync(join(gitDir, "logs", "HEAD"), text);
    return fn({ root, gitDir, commonDir: gitDir }).finally(() => rmSync(root, { recursive: true, force: true }));
  }
  const now = 1_800_000_000;
  const opts = { now, windowSec: 600, output: "", isCaptured: async () => false, single: false };

  test("a reflog of years: only the command's recent commits", () =>
    withReflog(
      [
        ...Array.from({ length: 6000 }, (_, i): [number, string] => [now - 90 * 86400 + i, i % 3 ? "checkout: moving from main to topic" : `commit: old change ${i}`]),
        [now - 5, "commit: one"],
        [now - 4, "commit: two"],
        [now - 3, "commit (amend): two, better"],
      ],
      async (repo) => {
        const found = await findNewCommits(repo, { ...opts, max: 10 });
        expect(found.map((c) => c.hash)).toEqual([hex(6001), hex(6003)]);
        expect(found[1]!.amendedFrom).toBe(hex(6002));
      },
    ));

  test("recent commits spread over more than one step of reading: all of them", () =>
    withReflog(
      [
        [now - 3000, "commit: before the window"],
        ...Array.from({ length: 400 }, (_, i): [number, string] => [now - 500 + i, `commit: change number ${i} of a long rebase-free run of work`]),
      ],
      async (repo) => {
        const found = await findNewCommits(repo, { ...opts, max: 400 });
        expect(found).toHaveLength(400);
        expect(found[0]!.hash).toBe(hex(2));
        expect(found[399]!.hash).toBe(hex(401));
      },
    ));
});
