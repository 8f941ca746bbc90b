/**
 * Session-start's saved answer (src/core/recall/start-cache.ts): whatever changes between two session starts (a
 * commit, an entry, a summary, the branch, the team cache, a settings file, the session starting), the answer the
 * hook gives equals the one computed from scratch.
 */
import { afterEach, describe, expect, setDefaultTimeout, test } from "bun:test";
import { existsSync, lstatSync, mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { runHook, tempRepo, type TempRepo } from "../helpers.ts";
import { uploadHistory } from "../timeline-fixture.ts";
import { agentCommit, capture, session } from "./capture-support.ts";

const repos: TempRepo[] = [];
afterEach(() => {
  for (const r of repos.splice(0)) r.cleanup();
});

const savedPath = (r: TempRepo) => join(r.root, ".git", "aiflare", "recall-start.json");

/** The session-start answer's text ("" for none), as the hook gives it with whatever answer is saved. */
async function start(r: TempRepo, sessionId: string, env: Record<string, string> = {}, source = "startup"): Promise<string> {
  const res = await runHook(r, "session-start", { session_id: sessionId, cwd: r.root, hook_event_name: "SessionStart", source }, { env });
  expect(res.code).toBe(0);
  return res.stdout ? (JSON.parse(res.stdout).hookSpecificOutput.additionalContext as string) : "";
}

/** The answer with nothing saved: computed from the index. */
async function computed(r: TempRepo, sessionId: string, env: Record<string, string> = {}): Promise<string> {
  rmSync(savedPath(r), { force: true });
  return start(r, sessionId, env);
}

/** The hook's answer with the saved one in place equals the computed one; returns it. */
async function same(r: TempRepo, sessionId: string, env: Record<string, string> = {}): Promise<string> {
  const given = await start(r, sessionId, env);
  expect(given).toBe(await computed(r, sessionId, env));
  return given;
}

/** Replaces the saved text, keeping its key: an answer that can only come from the file. */
function plant(r: TempRepo, text: string): void {
  const saved = JSON.parse(readFileSync(savedPath(r), "utf8"));
  writeFileSync(savedPath(r), JSON.stringify({ ...saved, text }));
}

function repoWithHistory(): { r: TempRepo; a: string; b: string } {
  const r = tempRepo();
  repos.push(r);
  return { r, ...uploadHistory(r) };
}

// each test runs a dozen or more processes: generous on a loaded machine
setDefaultTimeout(60_000);

describe("session-start's saved answer", () => {
  test("is written when computed and read back by the next start on the same state", async () => {
    const { r } = repoWithHistory();
    const first = await start(r, "s1");
    expect(first).toContain('"Add the upload client"');
    expect(existsSync(savedPath(r))).toBe(true);
    // a start on the same state answers from the file: a planted text comes back
    plant(r, "planted");
    expect(await start(r, "s2")).toBe("planted");
    expect(await computed(r, "s2")).toBe(first);
  });

  test("equals the computed answer across a new commit, a new entry, a summary written by capture and a branch switch", async () => {
    const { r, b } = repoWithHistory();
    const seen = [await same(r, "s1")];
    // a commit the agent made: a new entry, waiting for its summary
    const agent = session(r, "agent-1");
    await agent.prompt("add the retry");
    const { hash } = agentCommit(r, "feat: retry uploads", { "retry.txt": "retry\n" });
    await agent.bash('git commit -m "feat: retry uploads"');
    seen.push(await same(r, "s2"));
    expect(seen[1]).toContain(`Commit ${hash} of an earlier session`);
    // its summary, written by capture
    expect((await capture(r, ["--commit-hash", hash, "--title", "Retry uploads", "--intent", "Uploads failed on flaky networks."])).code).toBe(0);
    seen.push(await same(r, "s3"));
    expect(seen[2]).toContain('"Uploads failed on flaky networks."');
    // a commit without an entry changes nothing recall says, and is answered alike
    r.commit("three");
    expect(await same(r, "s4")).toBe(seen[2]!);
    // another branch, then detached HEAD, then back
    r.git("checkout", "-q", "-b", "other");
    seen.push(await same(r, "s5"));
    expect(seen[3]).toContain('branch "other"');
    r.git("checkout", "-q", "--detach");
    seen.push(await same(r, "s6"));
    expect(seen[4]).toContain("(detached HEAD)");
    r.git("checkout", "-q", "main");
    expect(await same(r, "s7")).toBe(seen[2]!);
    expect(new Set(seen).size).toBe(seen.length);
    expect(seen[0]).toContain(`Commit ${b} of an earlier session`);
  });

  test("aiflare capture has the next start's answer saved in the background once the summary is written; nothing where none was saved", async () => {
    const { r } = repoWithHistory();
    const agent = session(r, "agent-1");
    await agent.prompt("add the retry");
    const { hash } = agentCommit(r, "feat: retry uploads", { "retry.txt": "retry\n" });
    await agent.bash('git commit -m "feat: retry uploads"');
    // session-start recall not used yet in this clone: capture leaves no answer
    expect((await capture(r, ["--commit-hash", hash, "--title", "Retry uploads", "--intent", "A first summary."])).code).toBe(0);
    expect(existsSync(savedPath(r))).toBe(false);
    await start(r, "s1");
    expect((await capture(r, ["--commit-hash", hash, "--title", "Retry uploads", "--intent", "Uploads failed on flaky networks."])).code).toBe(0);
    // saved by a detached process: waited for
    const tip = r.git("rev-parse", "refs/heads/aiflare/timeline/v1");
    let saved = JSON.parse(readFileSync(savedPath(r), "utf8"));
    for (let i = 0; i < 200 && saved.tip !== tip; i++) {
      await Bun.sleep(100);
      saved = JSON.parse(readFileSync(savedPath(r), "utf8"));
    }
    expect(saved.tip).toBe(tip);
    expect(saved.text).toContain('"Uploads failed on flaky networks."');
    // the next start answers from it, and it is what computing gives
    plant(r, "planted");
    expect(await start(r, "s2")).toBe("planted");
    expect(await computed(r, "s2")).toBe(saved.text);
  });

  test("a session that ends with its commit still waiting for a summary has the next start's answer saved by its worker", async () => {
    const { r } = repoWithHistory();
    const before = await start(r, "s1");
    const agent = session(r, "agent-1");
    await agent.prompt("add the retry");
    const { hash } = agentCommit(r, "feat: retry uploads", { "retry.txt": "retry\n" });
    await agent.bash('git commit -m "feat: retry uploads"');
    expect((await agent.end()).code).toBe(0);
    // the commit's entry moved the timeline; the worker that stored the session's end saved the answer for it
    const tip = () => r.git("rev-parse", "refs/heads/aiflare/timeline/v1");
    let saved = JSON.parse(readFileSync(savedPath(r), "utf8"));
    for (let i = 0; i < 200 && saved.tip !== tip(); i++) {
      await Bun.sleep(100);
      saved = JSON.parse(readFileSync(savedPath(r), "utf8"));
    }
    expect(saved.tip).toBe(tip());
    expect(saved.text).not.toBe(before);
    expect(saved.text).toContain(`Commit ${hash} of an earlier session`);
    // the next start answers from it, and it is what computing gives
    plant(r, "planted");
    expect(await start(r, "s2")).toBe("planted");
    expect(await computed(r, "s2")).toBe(saved.text);
  });

  test("a saved answer planted as a symlink is neither read nor written through", async () => {
    const { r } = repoWithHistory();
    const base = await start(r, "s1");
    const outside = join(r.dir, "outside.json");
    writeFileSync(outside, JSON.stringify({ ...JSON.parse(readFileSync(savedPath(r), "utf8")), text: "planted" }));
    rmSync(savedPath(r));
    symlinkSync(outside, savedPath(r));
    expect(await start(r, "s2")).toBe(base);
    expect(lstatSync(savedPath(r)).isSymbolicLink()).toBe(false);
    expect(JSON.parse(readFileSync(outside, "utf8")).text).toBe("planted");
  });

  test("a session whose own commit waits for its summary is not given the answer saved for another", async () => {
    const { r, b } = repoWithHistory();
    const other = await start(r, "s1");
    expect(other).toContain(`Commit ${b} of an earlier session`);
    const own = await same(r, "old-2");
    expect(own).not.toContain(b);
    // and the answer saved for another session is still good for a third
    await start(r, "s1");
    plant(r, "planted");
    expect(await start(r, "s3")).toBe("planted");
    expect(await start(r, "old-2")).toBe(own);
  });

  test("a team cache, a backend or a settings file is never answered from the file", async () => {
    const { r } = repoWithHistory();
    const base = await start(r, "s1");
    const planted = async () => {
      await computed(r, "s1");
      plant(r, "planted");
    };
    // the team cache appears (`aiflare pull`, a lookup)
    await planted();
    mkdirSync(join(r.root, ".git", "aiflare"), { recursive: true });
    writeFileSync(join(r.root, ".git", "aiflare", "team.sqlite"), "");
    expect(await start(r, "s2")).toBe(base);
    rmSync(join(r.root, ".git", "aiflare", "team.sqlite"));
    // a backend set in the environment (nothing listens there: the team adds nothing)
    await planted();
    expect(await start(r, "s2", { AIFLARE_ENDPOINT: "http://127.0.0.1:9", AIFLARE_API_KEY: "key-0000000000" })).toBe(base);
    // (the lookup that found nothing is remembered in a team cache)
    rmSync(join(r.root, ".git", "aiflare", "team.sqlite"), { force: true });
    // the repository's settings file turns session-start recall off
    await planted();
    writeFileSync(join(r.root, "aiflare.yml"), "recall:\n  sessionStart: false\n");
    expect(await start(r, "s2")).toBe("");
    rmSync(join(r.root, "aiflare.yml"));
    // the user's own config turns recall off
    await planted();
    mkdirSync(join(r.home, ".config", "aiflare"), { recursive: true });
    writeFileSync(join(r.home, ".config", "aiflare", "config.yml"), "recall: false\n");
    expect(await start(r, "s2")).toBe("");
    rmSync(join(r.home, ".config", "aiflare", "config.yml"));
    // the environment turns recall off
    await planted();
    expect(await start(r, "s2", { AIFLARE_RECALL: "0" })).toBe("");
    // with all of them gone, the file answers again
    expect(await start(r, "s2")).toBe("planted");
  });

  test("after /clear the handoff is computed; after a compaction the saved answer still re-arms edit recall", async () => {
    const { r } = repoWithHistory();
    const base = await start(r, "s1");
    plant(r, "planted");
    const old = session(r, "cleared-1");
    await old.prompt("make the uploads resumable");
    await runHook(r, "session-end", { session_id: "cleared-1", cwd: r.root, hook_event_name: "SessionEnd", reason: "clear" });
    const afterClear = await start(r, "s2", {}, "clear");
    expect(afterClear).toContain("make the uploads resumable");
    expect(afterClear).not.toContain("planted");
    // a compaction: the session's recall marker goes, the answer is the saved one
    const marker = join(r.root, ".context-capture", ".claude-recall-s3");
    mkdirSync(join(r.root, ".context-capture"), { recursive: true });
    writeFileSync(marker, "x\n");
    expect(await start(r, "s3", {}, "compact")).toBe("planted");
    expect(existsSync(marker)).toBe(false);
    expect(await computed(r, "s3")).toBe(base);
  });
});
