import { Database } from "bun:sqlite";
/**
 * Sync figures: `aiflare sync` of 10,000 pending entries to a local server (total time, entries/s),
 * against the bare cost of posting the same batches with fetch; and the pre-push hook's wall time
 * with a dead backend (target ≤ 1 s), against `aiflare --version` and a push without the hook.
 */
import { chmodSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { binary, tempRepo } from "../test/helpers.ts";
import { makeEntry, writeConfig, writeEntries, writeSessions } from "../test/sync-fixtures.ts";
import { fmt, median, report } from "./lib.ts";

const N = 10_000;
const SESSIONS = 100;
const BIN = binary();

/** Wall time of one process run; async so the in-process server keeps answering. */
async function timeRun(cmd: string[], opts: { cwd: string; env: Record<string, string>; stdin?: string }): Promise<number> {
  const t0 = performance.now();
  const p = Bun.spawn(cmd, {
    cwd: opts.cwd,
    env: opts.env,
    stdin: opts.stdin === undefined ? "ignore" : new Blob([opts.stdin]),
    stdout: "ignore",
    stderr: "pipe",
  });
  const [code, err] = await Promise.all([p.exited, new Response(p.stderr).text()]);
  const ms = performance.now() - t0;
  if (code !== 0) throw new Error(`${cmd.join(" ")} exited ${code}: ${err}`);
  return ms;
}

// --- 1. sync of 10,000 pending entries ---------------------------------------------------------
const repo = tempRepo();
let received = 0;
const server = Bun.serve({
  hostname: "127.0.0.1",
  port: 0,
  async fetch(req) {
    const body = (await req.json()) as { captures?: unknown[] };
    received += body.captures?.length ?? 0;
    return Response.json({ ok: true });
  },
});
const endpoint = `http://127.0.0.1:${server.port}`;
writeFileSync(join(repo.root, ".git", "info", "exclude"), "aiflare.yml\n");
writeConfig(repo.root, endpoint, "bench-key-0000");
const hashes = Array.from({ length: N }, (_, i) => new Bun.CryptoHasher("sha1").update(`bench ${i}`).digest("hex"));
const t0 = performance.now();
const entries = hashes.map((h, i) =>
  makeEntry(h, {
    claudeSessionId: `bench-session-${i % SESSIONS}`,
    intent: `Problem: request ${i} was slow under /home/dev/app.\nSolution: cache it.\nEffect: fast.`,
    conversationSnippet: `${JSON.stringify({ role: "user", content: `please fix request ${i}` })}\n${JSON.stringify({ role: "assistant", content: "Done: added a cache and a test." })}\n`,
  }),
);
writeEntries(repo, entries);
const transcript = `${Array.from({ length: 50 }, (_, i) => JSON.stringify({ role: i % 2 ? "assistant" : "user", content: `line ${i} in /home/dev/app` })).join("\n")}\n`;
writeSessions(repo, Object.fromEntries(Array.from({ length: SESSIONS }, (_, i) => [`bench-session-${i}`, transcript])));
console.log(`setup: ${N} entries, ${SESSIONS} sessions written in ${fmt(performance.now() - t0)}`);

const env = repo.env;
// Build the index once (as any earlier aiflare command would have), then forget what was sent before each run.
Bun.spawnSync([BIN, "history", "list", "--limit", "1"], { cwd: repo.root, env, stdout: "ignore" });
const forgetSent = () => {
  const db = new Database(join(repo.root, ".git", "aiflare", "index.sqlite"));
  db.run("DELETE FROM sync_entries");
  db.run("DELETE FROM sync_sessions");
  db.close();
};
const full: number[] = [];
for (let i = 0; i < 3; i++) {
  forgetSent();
  received = 0;
  full.push(await timeRun([BIN, "sync"], { cwd: repo.root, env }));
  if (received !== N) throw new Error(`server received ${received} entries, expected ${N}`);
}
const noop: number[] = [];
for (let i = 0; i < 5; i++) noop.push(await timeRun([BIN, "sync"], { cwd: repo.root, env }));

// Baseline: the same 100 batch bodies posted with fetch from this process, 3 at a time.
const bodies: string[] = [];
for (let i = 0; i < N; i += 100) bodies.push(JSON.stringify({ captures: entries.slice(i, i + 100) }));
const raw: number[] = [];
for (let r = 0; r < 3; r++) {
  const t = performance.now();
  let next = 0;
  await Promise.all(
    Array.from({ length: 3 }, async () => {
      while (next < bodies.length) {
        const b = bodies[next++]!;
        await fetch(`${endpoint}/api/v1/captures/batch`, { method: "POST", body: b, headers: { "content-type": "application/json" } }).then((x) => x.text());
      }
    }),
  );
  raw.push(performance.now() - t);
}
report(`sync ${N} pending entries (+${SESSIONS} sessions)`, full, raw);
console.log(`${"".padEnd(44)} ${Math.round(N / (median(full) / 1000))} entries/s end to end`);
report("sync with nothing pending (10k accepted)", noop, raw);
report("baseline: same batches posted by fetch", raw);
server.stop(true);
repo.cleanup();

// --- 2. pre-push hook with a dead backend ------------------------------------------------------
const push = tempRepo();
const dead = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: () => new Response("") });
const deadUrl = `http://127.0.0.1:${dead.port}`;
dead.stop(true); // nothing listens there any more: connection refused
writeFileSync(join(push.root, ".git", "info", "exclude"), "aiflare.yml\n");
writeConfig(push.root, deadUrl, "bench-key-0000");
const remote = join(push.dir, "remote.git");
push.git("init", "-q", "--bare", remote);
push.git("remote", "add", "origin", remote);
push.git("push", "-q", "origin", "main");
const hookFile = join(push.root, ".git", "hooks", "pre-push");
const installHook = () => {
  writeFileSync(hookFile, `#!/bin/sh\n"${BIN}" hook pre-push "$@" || exit $?\n`);
  chmodSync(hookFile, 0o755);
};
installHook();

const hookOnly: number[] = [];
const withHook: number[] = [];
const noHook: number[] = [];
const version: number[] = [];
for (let i = -2; i < 10; i++) {
  // a new captured commit to push each round
  const c = push.commit(`bench ${i}`);
  writeEntries(push, [makeEntry(c)]);
  const old = push.git("rev-parse", "origin/main");
  const line = `refs/heads/main ${c} refs/heads/main ${old}\n`;
  const h = await timeRun([BIN, "hook", "pre-push", "origin", remote], { cwd: push.root, env: push.env, stdin: line });
  const w = await timeRun(["git", "push", "-q", "origin", "main"], { cwd: push.root, env: push.env });
  push.commit(`plain ${i}`);
  const n = await timeRun(["git", "push", "-q", "--no-verify", "origin", "main"], { cwd: push.root, env: push.env });
  const v = await timeRun([BIN, "--version"], { cwd: push.root, env: push.env });
  if (i >= 0) {
    hookOnly.push(h);
    withHook.push(w);
    noHook.push(n);
    version.push(v);
  }
}
report("aiflare hook pre-push, dead backend", hookOnly, version, "≤ 1000 ms");
report("git push with the hook, dead backend", withHook, noHook, "≤ 1000 ms");
report("baseline: git push --no-verify", noHook);
report("baseline: aiflare --version", version);

// The detached syncs keep retrying the dead backend for a few seconds each; wait for them to end.
const pids = [...readFileSync(join(push.root, ".context-capture", "aiflare.log"), "utf8").matchAll(/pid=(\d+)/g)].map((m) => Number(m[1]));
const until = Date.now() + 170_000;
const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};
while (pids.some(alive) && Date.now() < until) await Bun.sleep(200);
const log = readFileSync(join(push.root, ".context-capture", "aiflare.log"), "utf8");
const outcomes = (log.match(/sync \(pre-push\).*unavailable/g) ?? []).length;
console.log(`background syncs: ${pids.length} started, ${outcomes} logged the backend as unavailable (entries stay pending)`);
push.cleanup();
