import { afterEach, describe, expect, test } from "bun:test";
import { chmodSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { BIN, binary, runBin, tempRepo, type TempRepo } from "../helpers.ts";
import { agentCommit, fsckClean, session, showEntry, timelinePaths } from "./capture-support.ts";

let repo: TempRepo | undefined;
afterEach(() => {
  repo?.cleanup();
  repo = undefined;
});

/** Installs git's post-rewrite hook calling the binary, as the install command will. */
function installPostRewrite(r: TempRepo): void {
  binary();
  const hook = join(r.root, ".git", "hooks", "post-rewrite");
  writeFileSync(hook, `#!/bin/sh\nexec "${BIN}" hook post-rewrite "$@"\n`);
  chmodSync(hook, 0o755);
}

describe("rewrites keep entries attached", () => {
  test("hook post-rewrite moves entries and always exits 0", async () => {
    repo = tempRepo();
    const s = session(repo, "s1");
    await s.prompt("x");
    const a = agentCommit(repo, "feat: a", { "a.txt": "a" });
    await s.bash("git commit -qam a");
    const fake = "f".repeat(40);
    const r = await runBin(["hook", "post-rewrite", "amend"], { cwd: repo.root, env: repo.env, stdin: `${a.hash} ${fake}\n` });
    expect(r.code).toBe(0);
    expect(showEntry(repo, a.hash)).toBeNull();
    expect(showEntry(repo, fake)!.commitHash).toBe(fake);
    const junk = await runBin(["hook", "post-rewrite", "rebase"], { cwd: repo.root, env: repo.env, stdin: "garbage\n" });
    expect(junk.code).toBe(0);
    const outside = await runBin(["hook", "post-rewrite", "amend"], { cwd: repo.home, env: repo.env, stdin: "" });
    expect(outside.code).toBe(0);
  });

  test("the agent's own --amend with git's post-rewrite installed: one entry, at the new hash, summary kept", async () => {
    repo = tempRepo();
    installPostRewrite(repo);
    const s = session(repo, "s1");
    await s.prompt("add a");
    const a = agentCommit(repo, "feat: a", { "a.txt": "a" });
    await s.bash("git commit -qam 'feat: a'");
    await runBin(["capture", "--intent", "why a"], { cwd: repo.root, env: { ...repo.env, CLAUDE_SESSION_ID: "s1" } });
    writeFileSync(join(repo.root, "a2.txt"), "more");
    repo.git("add", "a2.txt");
    repo.git("commit", "-q", "--amend", "--no-edit");
    const amended = repo.git("rev-parse", "HEAD");
    const out = await s.bash("git add a2.txt && git commit -q --amend --no-edit");
    expect(out.code).toBe(0);
    // the agent is still told to capture the amended commit, as after any commit
    expect(JSON.parse(out.stdout).hookSpecificOutput.additionalContext).toContain(amended);
    expect(timelinePaths(repo)).toEqual([`entries/${amended.slice(0, 2)}/${amended.slice(2)}.json`]);
    const e = showEntry(repo, amended)!;
    expect(e.intent).toBe("why a");
    expect(e.changedFiles).toEqual(["a.txt", "a2.txt"]);
    // a later command that commits nothing does not take the amend for a new commit
    expect((await s.bash("git commit -q --amend --no-edit || true")).stdout).toBe("");
    expect(e.conversationSnippet).toContain("add a");
    expect(showEntry(repo, a.hash)).toBeNull();
  });

  test("the agent's --amend without the git hook: the commit hook moves the entry itself", async () => {
    repo = tempRepo();
    const s = session(repo, "s1");
    await s.prompt("add b");
    const b = agentCommit(repo, "feat: b", { "b.txt": "b" });
    await s.bash("git commit -qam 'feat: b'");
    await s.prompt("also b2");
    writeFileSync(join(repo.root, "b2.txt"), "more");
    repo.git("add", "b2.txt");
    repo.git("commit", "-q", "--amend", "--no-edit");
    const amended = repo.git("rev-parse", "HEAD");
    const out = await s.bash("git commit -q --amend --no-edit");
    expect(out.stdout).toContain(amended);
    expect(timelinePaths(repo)).toEqual([`entries/${amended.slice(0, 2)}/${amended.slice(2)}.json`]);
    const e = showEntry(repo, amended)!;
    expect(e.changedFiles).toEqual(["b.txt", "b2.txt"]);
    expect(e.conversationSnippet).toContain("add b");
    expect(e.conversationSnippet).toContain("also b2");
    expect(showEntry(repo, b.hash)).toBeNull();
  });

  test("an interactive rebase that rewords and squashes keeps entries and group roots on the new hashes", async () => {
    repo = tempRepo();
    installPostRewrite(repo);
    const s = session(repo, "s1");
    await s.prompt("do a, b, c");
    const hashes: string[] = [];
    for (const n of ["a", "b", "c"]) {
      hashes.push(agentCommit(repo, `feat: ${n}`, { [`${n}.txt`]: n }).hash);
      await s.bash(`git commit -qam "feat: ${n}"`);
    }
    expect(showEntry(repo, hashes[2]!)!.groupRootId).toBe(hashes[0]);
    // reword a, keep b, squash c into b
    const seq = `sed -i -e '1s/^pick/reword/' -e '3s/^pick/squash/'`;
    const r = Bun.spawnSync(["git", "rebase", "-q", "-i", "HEAD~3"], {
      cwd: repo.root,
      env: { ...repo.env, GIT_SEQUENCE_EDITOR: seq, GIT_EDITOR: "sed -i '1s/^/reworded: /'" },
    });
    expect(r.exitCode).toBe(0);
    const [newB, newA] = repo.git("log", "--format=%H", "-2").split("\n");
    expect(repo.git("log", "-1", "--format=%s", newA!)).toBe("reworded: feat: a");
    expect(timelinePaths(repo).sort()).toEqual(
      [newA!, newB!].map((h) => `entries/${h.slice(0, 2)}/${h.slice(2)}.json`).sort(),
    );
    const eb = showEntry(repo, newB!)!;
    expect(eb.groupRootId).toBe(newA);
    expect(eb.changedFiles.sort()).toEqual(["b.txt", "c.txt"]);
    expect(showEntry(repo, newA!)!.groupRootId).toBeNull();
    expect(fsckClean(repo)).toBe(true);
  });
});
