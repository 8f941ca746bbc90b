import { describe, expect, test } from "bun:test";
import { findGitCommits } from "../../src/core/capture/detect.ts";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { mayCommit, reflogStampOf, runsWhereItStarts } from "../../src/core/capture/may-commit.ts";
import { Rand } from "../fixtures/secrets/samples.ts";

const CWD = "/work/repo";
const HOME = "/home/dev";

/** A seeded generator (the secret samples' own), so a failure names a seed that reproduces it. */
function rng(seed: number): () => number {
  const r = new Rand(seed);
  return () => r.next();
}

/** `word` with its letters split by the quoting a shell removes: `g""it`, `co'm'mit`, `comm\it`, `git\<newline>`. */
function disguise(word: string, r: () => number): string {
  let out = "";
  for (const ch of word) {
    const k = Math.floor(r() * 8);
    if (k === 0) out += `""${ch}`;
    else if (k === 1) out += `'${ch}'`;
    else if (k === 2 && /[a-z]/.test(ch)) out += `\\${ch}`;
    else if (k === 3) out += `"${ch}"`;
    else out += ch;
  }
  return out;
}

describe("mayCommit: never says no to a line holding a commit", () => {
  const committing = [
    `git commit -m "add thing"`,
    `git -C sub/pkg commit -m x`,
    `git add -A && git commit -m "feat: x"`,
    `echo "done: $(git commit -m x)"`,
    "x=`git commit -m y`",
    `(cd sub && git commit -m x)`,
    `GIT_AUTHOR_DATE=now /usr/bin/git --no-pager commit -m y`,
    `git merge --no-ff feature -m "merge"`,
    `git -C sub cherry-pick abc123`,
    `git revert --no-edit HEAD`,
    `git am < patch.mbox`,
    `g""it co''mmit -m x`,
    `"git" "commit" -m x`,
    `\\git \\commit -m x`,
    `gi\\\nt comm\\\nit -m x`,
    `git.exe commit -m x`,
    `git "cherry-pick" abc`,
  ];
  for (const command of committing) {
    test(JSON.stringify(command), () => {
      expect(findGitCommits(command, CWD, HOME).length).toBeGreaterThan(0);
      expect(mayCommit(command)).toBe(true);
    });
  }

  test("generated lines: quoting inside the command name and the subcommand, wrappers, lists, subshells", () => {
    const subs = ["commit", "merge", "cherry-pick", "revert", "am"];
    const before = ["", "cd sub && ", "env A=1 ", "sudo ", "X=1 ", "ls; ", "(", "echo $(", "if true; then "];
    const after = ["", " -m x", ' -m "fix: it"', " --amend --no-edit", " -qam 'a b'", " feature", ")", "; fi"];
    let found = 0;
    for (let seed = 1; seed <= 3000; seed++) {
      const r = rng(seed);
      const pick = <T>(xs: T[]) => xs[Math.floor(r() * xs.length)]!;
      const git = pick(["git", "/usr/bin/git", "git.exe"]);
      const command = `${pick(before)}${disguise(git, r)} ${r() < 0.3 ? "-C dir " : ""}${disguise(pick(subs), r)}${pick(after)}`;
      if (findGitCommits(command, CWD, HOME).length === 0) continue;
      found++;
      if (!mayCommit(command)) throw new Error(`seed ${seed}: ${JSON.stringify(command)} holds a commit, mayCommit said no`);
    }
    // most generated lines hold a commit: the check above ran on them
    expect(found).toBeGreaterThan(2000);
  });
});

describe("mayCommit: says no to the usual shell calls", () => {
  for (const command of [
    "ls -la",
    "bun test test/unit",
    "git status",
    "git diff --stat",
    "git log --oneline -5",
    `rg "TODO" src`,
    "npm run build 2>&1 | tail -20",
  ]) {
    test(JSON.stringify(command), () => {
      expect(findGitCommits(command, CWD, HOME)).toEqual([]);
      expect(mayCommit(command)).toBe(false);
    });
  }
});

describe("runsWhereItStarts: never says so of a line whose git runs elsewhere", () => {
  const elsewhere = [
    "cd sub && git commit -m x",
    "pushd ../other; git commit -m x",
    "git -C ../other commit -m x",
    "git --work-tree=../w commit -m x",
    "git --work-tree ../w commit -m x",
    `(c""d sub && git commit -m x)`,
    `git '-C' ../o commit -m x`,
    `\\cd sub && git commit -m x`,
  ];
  for (const command of elsewhere) {
    test(JSON.stringify(command), () => {
      expect(findGitCommits(command, CWD, HOME).some((i) => i.dir !== CWD)).toBe(true);
      expect(runsWhereItStarts(command)).toBe(false);
    });
  }

  test("generated lines: wherever findGitCommits follows a line elsewhere, runsWhereItStarts says no", () => {
    const moves = ["cd sub && ", "pushd sub; ", "(cd /tmp/x && ", "cd ~/p; ", "", "", "ls && "];
    const flags = ["-C dir ", "--work-tree=w ", "--work-tree w ", "-c a=b ", "--no-pager ", ""];
    let elsewhereSeen = 0;
    for (let seed = 1; seed <= 3000; seed++) {
      const r = rng(seed);
      const pick = <T>(xs: T[]) => xs[Math.floor(r() * xs.length)]!;
      const command = `${disguise(pick(moves), r)}git ${disguise(pick(flags), r)}commit -m x${r() < 0.3 ? ")" : ""}`;
      const found = findGitCommits(command, CWD, HOME);
      if (found.length === 0 || found.every((i) => i.dir === CWD)) continue;
      elsewhereSeen++;
      if (runsWhereItStarts(command)) throw new Error(`seed ${seed}: ${JSON.stringify(command)} runs git elsewhere, runsWhereItStarts said no`);
    }
    expect(elsewhereSeen).toBeGreaterThan(500);
  });

  test("the usual commits run where they start", () => {
    for (const command of [`git add -A && git commit -m "feat: x"`, "git commit --amend --no-edit", `git commit -m "$(cat <<'EOF'\nfix: y\nEOF\n)"`]) {
      expect(findGitCommits(command, CWD, HOME).every((i) => i.dir === CWD)).toBe(true);
      expect(runsWhereItStarts(command)).toBe(true);
    }
  });
});

describe("reflogStampOf", () => {
  test("each git dir once, however many invocations name it; another line changes it; no reflog gives none", () => {
    const dir = mkdtempSync(join(tmpdir(), "aiflare-stamp-"));
    try {
      const a = join(dir, "a");
      mkdirSync(join(a, "logs"), { recursive: true });
      writeFileSync(join(a, "logs", "HEAD"), "one line\n");
      const once = reflogStampOf([a]);
      expect(once).not.toBeNull();
      // the hook's own look (this repository) and the commit hook's (one stamp per invocation) agree
      expect(reflogStampOf([a, a, a])).toBe(once);
      writeFileSync(join(a, "logs", "HEAD"), "one line\nanother line\n");
      expect(reflogStampOf([a])).not.toBe(once);
      expect(reflogStampOf([a, join(dir, "none")])).toBeNull();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
