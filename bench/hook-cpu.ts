/**
 * CPU time of the commit hook (post-tool-use after a new commit) and of session-end, for one or two binaries run
 * interleaved (AIFLARE_OLD_BIN beside dist/aiflare): on a loaded machine CPU time, not wall time, tells them apart.
 */
import { writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { tempRepo } from "../test/helpers.ts";
import { commitHookPayload, interleaved, median, runProcess as run, type Run } from "./lib.ts";

const N = Number(process.env.BENCH_RUNS ?? 12);
const bins = [process.env.AIFLARE_BIN ?? resolve(import.meta.dir, "..", "dist", "aiflare")];
if (process.env.AIFLARE_OLD_BIN) bins.unshift(process.env.AIFLARE_OLD_BIN);

function side(bin: string) {
  const repo = tempRepo();
  const r = Bun.spawnSync([bin, "install"], { cwd: repo.root, env: repo.env, stdout: "ignore", stderr: "pipe" });
  if (r.exitCode !== 0) throw new Error(`aiflare install: ${r.stderr.toString()}`);
  const hook = (event: string, session: string, payload: Record<string, unknown>) =>
    run([bin, "hook", event], { cwd: repo.root, env: repo.env, stdin: JSON.stringify({ session_id: session, cwd: repo.root, hook_event_name: event, ...payload }) });
  // session ids as the agents give them (UUIDs)
  const session = crypto.randomUUID();
  let n = 0;
  const commit = (): Run => {
    const i = n++;
    hook("user-prompt-submit", session, { prompt: `change ${i} `.repeat(30) });
    writeFileSync(join(repo.root, `change-${i}.txt`), `${i}\n`);
    repo.git("add", "-A");
    repo.git("commit", "-q", "-m", `feat: change ${i}`);
    return run([bin, "hook", "post-tool-use"], { cwd: repo.root, env: repo.env, stdin: commitHookPayload(session, repo.root, repo.home, i) });
  };
  const end = (): Run => {
    const ended = crypto.randomUUID();
    n++;
    hook("user-prompt-submit", ended, { prompt: `question ${n} `.repeat(30) });
    hook("stop", ended, { last_assistant_message: `answer ${n} `.repeat(40) });
    return hook("session-end", ended, { reason: "exit" });
  };
  for (let i = 0; i < 3; i++) commit();
  return { commit, end };
}

const sides = bins.map(side);
const commits = interleaved(N, sides.map((s) => s.commit));
const ends = interleaved(N, sides.map((s) => s.end));
const fmt = (rs: Run[]) => `CPU ${median(rs.map((r) => r.cpu)).toFixed(1)} ms, wall ${median(rs.map((r) => r.wall)).toFixed(1)} ms`;
bins.forEach((bin, i) => {
  console.log(`${bin}\n  commit hook: ${fmt(commits[i]!)}\n  session-end: ${fmt(ends[i]!)}`);
});
