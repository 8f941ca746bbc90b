import { afterEach, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { chmodSync, existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { FIXTURES, binary, runBin, tempRepo, type TempRepo } from "../helpers.ts";
import { makeEntry, startBackend, writeConfig, writeEntries, writeSessions, type Backend } from "../sync-fixtures.ts";

const KEY = "ak_live_0123456789abcdefWXYZ";
// retries, a 5 s request timeout and background syncs take longer than bun's default 5 s per test
setDefaultTimeout(60_000);

let repo: TempRepo;
let be: Backend;

beforeAll(() => {
  binary();
});
afterEach(() => {
  be?.stop();
  repo?.cleanup();
});

const sync = (args: string[] = [], env: Record<string, string> = {}) => runBin(["sync", ...args], { cwd: repo.root, env: { ...repo.env, ...env } });

/** A repository with two captured commits on main and one transcript, and a backend. */
function setup(opts: { config?: boolean } = {}) {
  repo = tempRepo();
  be = startBackend();
  const c1 = repo.commit("first change");
  const c2 = repo.commit("second change");
  writeEntries(repo, [
    makeEntry(c1, { claudeSessionId: "sess-a", intent: "Problem: /home/alice/app crashed" }),
    makeEntry(c2, { claudeSessionId: "sess-a" }),
  ]);
  // a real Claude Code transcript (usernames anonymised upstream as /home/USER/)
  const transcript = readFileSync(join(FIXTURES, "marot__spotter/test/fixtures/transcripts/subagent.jsonl"), "utf8");
  writeSessions(repo, { "sess-a": transcript });
  // `install` git-ignores aiflare.yml; without that, test commits would pick it up
  writeFileSync(join(repo.root, ".git", "info", "exclude"), "aiflare.yml\n");
  if (opts.config !== false) writeConfig(repo.root, be.url, KEY);
  return { c1, c2, transcript };
}

describe("aiflare sync", () => {
  test("no config: one line saying how to configure, exit 0, nothing sent", async () => {
    setup({ config: false });
    const r = await sync();
    expect(r.code).toBe(0);
    expect(r.stdout.trim().split("\n")).toHaveLength(1);
    expect(r.stdout).toContain("aiflare.yml");
    expect(r.stdout).toContain("AIFLARE_API_KEY");
    expect(be.received).toHaveLength(0);
  });

  test("sends entries and the session with the key, redacted; a second sync sends nothing", async () => {
    const { c1, c2, transcript } = setup();
    expect(transcript.includes("/home/")).toBe(true);
    const r = await sync();
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("Sent 2 entries and 1 session");
    expect(r.stdout).toContain("…WXYZ");
    expect(r.stdout + r.stderr).not.toContain(KEY);
    expect(be.received.every((x) => x.key === KEY)).toBe(true);
    expect(be.captures().map((c) => c.commitHash).sort()).toEqual([c1, c2].sort());
    const [session] = be.sessions();
    expect(session!.claudeSessionId).toBe("sess-a");
    expect(session!.content.includes("/home/")).toBe(false);
    expect(session!.content.split("\n").length).toBe(transcript.split("\n").length);
    expect(JSON.stringify(be.captures())).not.toContain("/home/alice");

    const n = be.received.length;
    const again = await sync();
    expect(again.code).toBe(0);
    expect(again.stdout).toContain("Nothing to send");
    expect(be.received.length).toBe(n);
    const log = readFileSync(join(repo.root, ".context-capture", "aiflare.log"), "utf8");
    expect(log).not.toContain(KEY);
  });

  test("environment variables override aiflare.yml", async () => {
    setup();
    const other = startBackend();
    try {
      const r = await sync([], { AIFLARE_ENDPOINT: other.url, AIFLARE_API_KEY: "env-key-7777" });
      expect(r.code).toBe(0);
      expect(be.received).toHaveLength(0);
      expect(other.received.map((x) => x.key)).toEqual(["env-key-7777", "env-key-7777"]);
    } finally {
      other.stop();
    }
  });

  test("401: stops at once, exit 1, says which key to check without printing it", async () => {
    setup();
    be.respond(() => new Response("", { status: 401 }));
    const r = await sync();
    expect(r.code).toBe(1);
    expect(be.received).toHaveLength(1);
    expect(r.stdout).toContain("api_key in aiflare.yml");
    expect(r.stdout).toContain("…WXYZ");
    expect(r.stdout + r.stderr).not.toContain(KEY);
  });

  test("404: stops at once and points at the endpoint", async () => {
    setup();
    be.respond(() => new Response("", { status: 404 }));
    const r = await sync();
    expect(r.code).toBe(1);
    expect(be.received).toHaveLength(1);
    expect(r.stdout).toContain("endpoint in aiflare.yml");
  });

  test("500: retried, reported, exit 1; the entries are sent by the next sync", async () => {
    const { c1, c2 } = setup();
    be.respond(() => new Response("down", { status: 500 }));
    const r = await sync();
    expect(r.code).toBe(1);
    expect(be.received.length).toBe(4);
    expect(r.stdout).toContain("unavailable");
    expect(r.stdout).toContain("stay pending");
    be.respond(() => Response.json({ ok: true }));
    const r2 = await sync();
    expect(r2.code).toBe(0);
    expect(be.captures().map((c) => c.commitHash).sort()).toEqual([c1, c2].sort());
  });

  test("429 with Retry-After is waited out, then succeeds", async () => {
    setup();
    let n = 0;
    be.respond(() => (n++ === 0 ? new Response("", { status: 429, headers: { "retry-after": "1" } }) : Response.json({})));
    const r = await sync();
    expect(r.code).toBe(0);
    expect(be.captures()).toHaveLength(2);
    expect(be.received[0]!.body).toEqual(be.received[1]!.body);
  });

  test("a request with no answer within 5 s is abandoned and retried", async () => {
    setup();
    let n = 0;
    be.respond(async () => {
      if (n++ === 0) await Bun.sleep(7000);
      return Response.json({});
    });
    const r = await sync();
    expect(r.code).toBe(0);
    expect(be.captures()).toHaveLength(2);
  });

  test("400: that batch is reported with the backend's reason", async () => {
    setup();
    be.respond((req) => (req.path.endsWith("/batch") ? Response.json({ message: "unknown tag" }, { status: 400 }) : Response.json({})));
    const r = await sync(["--json"]);
    expect(r.code).toBe(1);
    const out = JSON.parse(r.stdout);
    expect(out.entries).toEqual({ sent: 0, skipped: 0, failed: 2 });
    expect(out.failed[0].reason).toContain("unknown tag");
    expect(be.sessions()).toHaveLength(0);
  });

  test("--dry-run lists what would go and sends nothing; named commits; unknown commit is an error", async () => {
    const { c1, c2 } = setup();
    const dry = await sync(["--dry-run"]);
    expect(dry.code).toBe(0);
    expect(dry.stdout).toContain("would send 2 entries");
    expect(dry.stdout).toContain(c1.slice(0, 7));
    expect(dry.stdout).toContain("sess-a");
    expect(be.received).toHaveLength(0);

    const one = await sync(["HEAD~1", "--json"]);
    expect(one.code).toBe(0);
    expect(JSON.parse(one.stdout).entries.sent).toBe(1);
    expect(be.captures().map((c) => c.commitHash)).toEqual([c1]);

    const bad = await sync(["no-such-rev"]);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain("not a commit in this repository: no-such-rev");
    expect(c2).toBeTruthy();
  });
});

describe("git push with the pre-push hook", () => {
  /** A bare remote, main pushed once, the hook installed as a wrapper script that forwards args and stdin. */
  function withRemote() {
    const s = setup();
    const remote = join(repo.dir, "remote.git");
    repo.git("init", "-q", "--bare", remote);
    repo.git("remote", "add", "origin", remote);
    const hook = join(repo.root, ".git", "hooks", "pre-push");
    writeFileSync(hook, `#!/bin/sh\n# a user's chained hook would run here\n"${binary()}" hook pre-push "$@" || exit $?\n`);
    chmodSync(hook, 0o755);
    return { ...s, remote };
  }

  /** Waits for the background sync's line in the log (it runs detached after the push). */
  async function backgroundDone(count: number): Promise<string> {
    const file = join(repo.root, ".context-capture", "aiflare.log");
    for (let i = 0; i < 300; i++) {
      const log = existsSync(file) ? readFileSync(file, "utf8") : "";
      if ((log.match(/sync \(pre-push\)/g) ?? []).length >= count) return log;
      await Bun.sleep(100);
    }
    throw new Error(`the background sync never logged an outcome; log:\n${existsSync(file) ? readFileSync(file, "utf8") : "(none)"}`);
  }

  test("--all is refused with the reason and how to push without aiflare branches", async () => {
    withRemote();
    const r = repo.tryGit("push", "--all", "origin");
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain("push refused");
    expect(r.stderr).toContain("refs/heads/aiflare/timeline/v1");
    expect(r.stderr).toContain("'^refs/heads/aiflare/*'");
    expect(repo.git("--git-dir", join(repo.dir, "remote.git"), "for-each-ref")).toBe("");
    const named = repo.tryGit("push", "origin", "aiflare/sessions/v1:refs/heads/backup");
    expect(named.code).not.toBe(0);
    expect(named.stderr).toContain("refs/heads/aiflare/sessions/v1");
    // what the message suggests works
    const ok = repo.tryGit("push", "origin", "refs/heads/*:refs/heads/*", "^refs/heads/aiflare/*");
    expect(ok.code).toBe(0);
    expect(repo.git("--git-dir", join(repo.dir, "remote.git"), "for-each-ref", "--format=%(refname)")).toBe("refs/heads/main");
  });

  test("pushing main sends exactly the pushed commits' entries", async () => {
    const { c1, c2 } = withRemote();
    repo.git("push", "-q", "origin", "HEAD~1:refs/heads/main");
    await backgroundDone(1);
    expect(be.captures().map((c) => c.commitHash)).toEqual([c1]);
    // a commit on another branch, captured but not pushed
    repo.git("checkout", "-q", "-b", "local-only");
    const c3 = repo.commit("not pushed");
    writeEntries(repo, [makeEntry(c3, { claudeSessionId: "sess-a" })]);
    repo.git("checkout", "-q", "main");
    const r = repo.tryGit("push", "origin", "main");
    expect(r.code).toBe(0);
    await backgroundDone(2);
    expect(be.captures().map((c) => c.commitHash)).toEqual([c1, c2]);
    expect(be.received.every((x) => x.key === KEY)).toBe(true);
    expect(be.sessions().map((s) => s.claudeSessionId)).toEqual(["sess-a"]);
    // hand-over files are cleaned up
    expect(readdirSync(join(repo.root, ".git", "aiflare", "push"))).toEqual([]);
  });

  test("a new branch sends the commits new to the remote", async () => {
    const { c1, c2 } = withRemote();
    repo.git("push", "-q", "origin", "HEAD~2:refs/heads/main");
    repo.git("fetch", "-q", "origin");
    repo.git("checkout", "-q", "-b", "feature");
    expect(repo.tryGit("push", "origin", "feature").code).toBe(0);
    await backgroundDone(2);
    // the second push's sync may have left its commits to the first one, still running: wait for them to arrive
    for (let i = 0; i < 300 && be.captures().length < 2; i++) await Bun.sleep(100);
    expect(be.captures().map((c) => c.commitHash).sort()).toEqual([c1, c2].sort());
  });

  test("with the backend stopped the push still succeeds and the entries stay pending", async () => {
    const { c1, c2 } = withRemote();
    const url = be.url;
    be.stop();
    const r = repo.tryGit("push", "origin", "main");
    expect(r.code).toBe(0);
    expect(repo.git("--git-dir", join(repo.dir, "remote.git"), "rev-parse", "main")).toBe(c2);
    const log = await backgroundDone(1);
    expect(log).toContain("unavailable");
    // back up: the next sync sends what the push could not
    be = startBackend();
    const r2 = await sync([], { AIFLARE_ENDPOINT: be.url });
    expect(r2.code).toBe(0);
    expect(be.captures().map((c) => c.commitHash).sort()).toEqual([c1, c2].sort());
    expect(url).not.toBe("");
  });

  test("not configured: the hook stays silent and the push goes on", async () => {
    withRemote();
    require("node:fs").rmSync(join(repo.root, "aiflare.yml"));
    const r = repo.tryGit("push", "origin", "main");
    expect(r.code).toBe(0);
    expect(r.stderr).not.toContain("aiflare:");
    expect(existsSync(join(repo.root, ".git", "aiflare", "push"))).toBe(false);
  });

  test("against a backend that never answers, a second background sync exits at once and leaves its commits queued", async () => {
    const { c1, c2 } = setup();
    // accepts connections, never answers
    const silent = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
    try {
      writeConfig(repo.root, `http://127.0.0.1:${silent.port}`, KEY);
      const queue = join(repo.root, ".git", "aiflare", "push");
      require("node:fs").mkdirSync(queue, { recursive: true });
      const first = join(queue, "1-1.txt");
      const second = join(queue, "2-2.txt");
      writeFileSync(first, `${c1}\n`);
      const holder = Bun.spawn([binary(), "sync", "--from-hook", first], { cwd: repo.root, env: repo.env, stdout: "ignore", stderr: "ignore" });
      const lock = join(repo.root, ".git", "aiflare", "sync.lock");
      while (!existsSync(lock) || existsSync(first)) await Bun.sleep(20); // the first holds the lock and took its file
      writeFileSync(second, `${c2}\n`);
      const r = await runBin(["sync", "--from-hook", second], { cwd: repo.root, env: repo.env });
      expect(r.code).toBe(0);
      expect(holder.exitCode).toBeNull(); // the first is still waiting for the silent backend
      expect(readFileSync(second, "utf8")).toBe(`${c2}\n`); // the second's work stays queued
      expect(readFileSync(join(repo.root, ".context-capture", "aiflare.log"), "utf8")).toContain("stay queued for the next sync");
      holder.kill();
      await holder.exited;
      // the next sync takes what was queued, with its own commits
      writeConfig(repo.root, be.url, KEY);
      const third = join(queue, "3-3.txt");
      writeFileSync(third, "");
      const next = await runBin(["sync", "--from-hook", third], { cwd: repo.root, env: repo.env });
      expect(next.code).toBe(0);
      expect(readdirSync(queue)).toEqual([]);
      expect(be.captures().map((c: { commitHash: string }) => c.commitHash)).toContain(c2);
    } finally {
      silent.stop(true);
    }
  });

  test("sync --from-hook only reads (and removes) hand-over files of this repository", async () => {
    setup();
    const precious = join(repo.dir, "precious.txt");
    writeFileSync(precious, "keep me\n");
    const r = await runBin(["sync", "--from-hook", precious], { cwd: repo.root, env: repo.env });
    expect(r.code).toBe(0);
    expect(readFileSync(precious, "utf8")).toBe("keep me\n");
    expect(readFileSync(join(repo.root, ".context-capture", "aiflare.log"), "utf8")).toContain("--from-hook takes a file from");
    expect(be.received).toHaveLength(0);
    const help = await runBin(["sync", "--help"], { cwd: repo.root, env: repo.env });
    expect(help.stdout).toContain("--dry-run");
    expect(help.stdout).not.toContain("from-hook");
  });

  test("the hook exits 0 outside a repository and with junk on stdin", async () => {
    setup();
    const junk = await runBin(["hook", "pre-push", "origin", "x"], { cwd: repo.root, env: repo.env, stdin: "not ref lines\n" });
    expect(junk).toMatchObject({ code: 0, stdout: "" });
    const outside = await runBin(["hook", "pre-push", "origin", "x"], { cwd: repo.home, env: repo.env, stdin: "" });
    expect(outside).toMatchObject({ code: 0, stdout: "" });
  });
});
