/**
 * CPU time of the commit hook (post-tool-use after a new commit) and of session-end, for one or two binaries run
 * interleaved (AIFLARE_OLD_BIN beside dist/aiflare): on a loaded machine CPU time, not wall time, tells them apart.
 * `bun run bench hook-cpu`; BENCH_RUNS sets the runs of each (12).
 *
 * Where a hook hands its storing to the detached capture worker, each measured hook is followed by a wait for that
 * worker, and the worker's own CPU (still spent on the user's cores, though not while the agent waits) is printed
 * as a row of its own: the same work queued with the worker held back, then `aiflare __capture-worker` run and
 * measured.
 */
import { existsSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { tempRepo, type TempRepo } from "../test/helpers.ts";
import { commitHookPayload, compileLikeAiflare, interleaved, livedInReflog, median, runProcess as run, tempDir, type Run } from "./lib.ts";

const N = Number(process.env.BENCH_RUNS ?? 12);
const bins = [process.env.AIFLARE_BIN ?? resolve(import.meta.dir, "..", "dist", "aiflare")];
if (process.env.AIFLARE_OLD_BIN) bins.unshift(process.env.AIFLARE_OLD_BIN);

const repos: TempRepo[] = [];

/** True while the repository's capture queue holds work or a worker is at it. */
function queueBusy(root: string): boolean {
  const queue = join(root, ".git", "aiflare", "queue");
  return existsSync(queue) && readdirSync(queue).some((n) => n.endsWith(".job") || n === "drain.lock");
}

/** Waits until the capture worker a hook started is done, so that it does not run beside the next measurement. */
function settle(root: string): void {
  for (const started = Date.now(); queueBusy(root) && Date.now() - started < 30_000; ) Bun.sleepSync(5);
}

function side(bin: string) {
  const repo = tempRepo();
  repos.push(repo);
  livedInReflog(repo.root);
  const r = Bun.spawnSync([bin, "install"], { cwd: repo.root, env: repo.env, stdout: "ignore", stderr: "pipe" });
  if (r.exitCode !== 0) throw new Error(`aiflare install: ${r.stderr.toString()}`);
  // the hooks' worker held back: the worker row runs it itself
  let env = repo.env;
  const hook = (event: string, session: string, payload: Record<string, unknown>) =>
    run([bin, "hook", event], { cwd: repo.root, env, stdin: JSON.stringify({ session_id: session, cwd: repo.root, hook_event_name: event, ...payload }) });
  // session ids as the agents give them (UUIDs)
  const session = crypto.randomUUID();
  let n = 0;
  const commit = (): Run => {
    const i = n++;
    hook("user-prompt-submit", session, { prompt: `change ${i} `.repeat(30) });
    writeFileSync(join(repo.root, `change-${i}.txt`), `${i}\n`);
    repo.git("add", "-A");
    repo.git("commit", "-q", "-m", `feat: change ${i}`);
    const measured = run([bin, "hook", "post-tool-use"], { cwd: repo.root, env, stdin: commitHookPayload(session, repo.root, repo.home, i) });
    if (env === repo.env) settle(repo.root);
    return measured;
  };
  const end = (): Run => {
    const ended = crypto.randomUUID();
    n++;
    hook("user-prompt-submit", ended, { prompt: `question ${n} `.repeat(30) });
    hook("stop", ended, { last_assistant_message: `answer ${n} `.repeat(40) });
    const measured = hook("session-end", ended, { reason: "exit" });
    if (env === repo.env) settle(repo.root);
    return measured;
  };
  // the worker's own CPU for the work a hook queued (null for a binary that does it all in the hook)
  const worker = (queue: () => Run): Run | null => {
    env = { ...repo.env, AIFLARE_NO_CAPTURE_WORKER: "1" };
    try {
      queue();
    } finally {
      env = repo.env;
    }
    if (!queueBusy(repo.root)) return null;
    return run([bin, "__capture-worker", join(repo.root, ".git")], { cwd: repo.root, env: repo.env });
  };
  for (let i = 0; i < 3; i++) commit();
  return { commit, end, commitWorker: () => worker(commit), endWorker: () => worker(end) };
}

// the floor: programs built with aiflare's start-up options that do nothing, or only append a line
const work = tempDir("aiflare-hook-cpu-");
const empty = await compileLikeAiflare(work, "empty", "export {};\n");
const append = await compileLikeAiflare(
  work,
  "append",
  `import { appendFileSync } from "node:fs";\nappendFileSync(${JSON.stringify(join(work, "append.log"))}, "{}\\n");\n`,
);
const sides = bins.map(side);
const floor = [() => run([empty]), () => run([append])];
const commits = interleaved(N, [...sides.map((s) => s.commit), ...floor]);
const ends = interleaved(N, [...sides.map((s) => s.end), ...floor]);
const workers = sides.map((s) => {
  const commit: Run[] = [];
  const end: Run[] = [];
  for (let i = 0; i < N; i++) {
    const c = s.commitWorker();
    const e = s.endWorker();
    if (c) commit.push(c);
    if (e) end.push(e);
  }
  return { commit, end };
});
for (const r of repos) r.cleanup();
rmSync(work, { recursive: true, force: true });
const cpu = (rs: Run[]) => median(rs.map((r) => r.cpu));
const fmt = (rs: Run[], base: Run[], baseName: string) =>
  `CPU ${cpu(rs).toFixed(1)} ms (${(cpu(rs) / cpu(base)).toFixed(2)}× ${baseName}), wall ${median(rs.map((r) => r.wall)).toFixed(1)} ms`;
const n = bins.length;
console.log(`empty program CPU ${cpu(ends[n]!).toFixed(1)} ms; appending a line CPU ${cpu(commits[n + 1]!).toFixed(1)} ms`);
bins.forEach((bin, i) => {
  console.log(`${bin}\n  commit hook: ${fmt(commits[i]!, commits[n + 1]!, "appending")}\n  session-end: ${fmt(ends[i]!, ends[n]!, "empty")}`);
  const w = workers[i]!;
  if (w.commit.length) console.log(`  capture worker after the commit hook (not a goal): CPU ${cpu(w.commit).toFixed(1)} ms, wall ${median(w.commit.map((r) => r.wall)).toFixed(1)} ms`);
  if (w.end.length) console.log(`  capture worker after session-end (not a goal): CPU ${cpu(w.end).toFixed(1)} ms, wall ${median(w.end.map((r) => r.wall)).toFixed(1)} ms`);
});
