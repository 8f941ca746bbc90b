/**
 * Speed as the user feels it (issue "Speed as the user feels it"): the hooks inside a real Claude Code turn, and the
 * commit hook and its no-op path on their own, each against a compiled program that does nothing (or only appends a
 * line) in the same place. Everything is paired and interleaved in this one run, so a busy machine slows both
 * sides alike; the machine's load is printed at the start and the end.
 *
 * The turn: the pinned Claude Code (test/agents/.install) against a scripted model on 127.0.0.1 that answers at once:
 * one prompt, one Bash call that commits, one that writes the commit's summary with `aiflare capture`, a final text.
 * Each hook command is wrapped in `bash -c` that notes its start and end ($EPOCHREALTIME); the same wrapper runs the
 * empty program in a second repository, in a third the floor of any hook that records (a program built the same way
 * that reads its payload and appends it to a file), and in a fourth a hook that hands its payload to a process already
 * running (over a unix socket, without node:fs) and waits for its answer: what a resident per-repository process would
 * cost each hook before doing any work. The wrapper's own cost is on every side. Then the same five hooks' work runs
 * warm in this one process, for an estimate of what such a resident process would make of the turn.
 *
 * BENCH_TURNS sets the number of turns of each kind (8 by default).
 */
import { appendFileSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { loadavg } from "node:os";
import { join, resolve } from "node:path";
import { installAiflare, claudePrint, settleClaudeHome } from "../test/agents/claude-support.ts";
import { ensureAgent } from "../test/agents/install.ts";
import { anthropicServer, type ScriptStep } from "../test/agents/model-server.ts";
import { tempRepo, type TempRepo } from "../test/helpers.ts";
import type { AgentEvent } from "../src/agents/types.ts";
import { commitHookPayload, compileLikeAiflare, interleaved, livedInReflog, median, runProcess as run, tempDir, type Run } from "./lib.ts";

const BIN = process.env.AIFLARE_BIN ?? resolve(import.meta.dir, "..", "dist", "aiflare");
const TURNS = Number(process.env.BENCH_TURNS ?? 8);
const work = tempDir("aiflare-turn-");
const repos: TempRepo[] = [];

const ms = (x: number) => `${x.toFixed(1)} ms`;
const load = () => loadavg().map((x) => x.toFixed(1)).join(" / ");
const verdict = (met: boolean) => (met ? "met" : "not met");
let rows = 0;
let unmet = 0;

function row(what: string, figure: string, goal: string, met: boolean): void {
  rows++;
  if (!met) unmet++;
  console.log(`  ${what}: ${figure}  [goal ${goal}: ${verdict(met)}]`);
}

/** A temporary repository with a lived-in HEAD reflog and aiflare installed by the binary under test. */
function installedRepo(): TempRepo {
  const repo = tempRepo();
  repos.push(repo);
  livedInReflog(repo.root);
  const r = Bun.spawnSync([BIN, "install"], { cwd: repo.root, env: repo.env, stdout: "ignore", stderr: "pipe" });
  if (r.exitCode !== 0) throw new Error(`aiflare install: ${r.stderr.toString()}`);
  return repo;
}

// ---------------------------------------------------------------------------------------------------------------
// the real turn

/** The hooks of one repository's Claude Code settings, each run through a timing wrapper that logs to `log`. */
function wrapHooks(repo: TempRepo, program: string, log: string): void {
  const file = join(repo.root, ".claude", "settings.local.json");
  const settings = JSON.parse(readFileSync(file, "utf8")) as { hooks: Record<string, { hooks: { command: string }[] }[]> };
  for (const groups of Object.values(settings.hooks)) {
    for (const group of groups) {
      for (const h of group.hooks) {
        const m = / hook (\S+)$/.exec(h.command);
        if (!m) throw new Error(`unexpected hook command ${h.command}`);
        // stdin and stdout go through; the exit code is kept
        h.command =
          `bash -c 's=$EPOCHREALTIME; "$0" hook ${m[1]}; r=$?; echo "${m[1]} $s $EPOCHREALTIME" >> ${log}; exit $r' ` + program;
      }
    }
  }
  writeFileSync(file, JSON.stringify(settings, null, 2));
}

interface Turn {
  /** ms per hook run, in order, by event */
  hooks: { event: string; ms: number }[];
  total: number;
}

/**
 * One turn in `repo`: a commit, its summary, a final answer. Returns the hooks' times read from the wrapper's log.
 * The summary's command names the commit by its hash, as aiflare's reminder gives it to the model: with `reminded`,
 * the reminder must have reached the model by then, naming the commit just made (the empty program says nothing, and
 * the same command is made from the repository's HEAD).
 */
async function turn(repo: TempRepo, log: string, i: number, reminded: boolean): Promise<Turn> {
  const before = existsSync(log) ? readFileSync(log, "utf8").length : 0;
  let unreminded = false;
  const script: ScriptStep[] = [
    { tool: "Bash", input: { command: `printf 'change ${i}\\n' > change-${i}.txt && git add -A && git commit -q -m 'feat: change ${i}'`, description: "commit" } },
    (request) => {
      const hash = repo.git("rev-parse", "HEAD");
      if (reminded && !JSON.stringify(request.body).includes(`capture --commit-hash ${hash}`)) unreminded = true;
      return {
        tool: "Bash",
        input: {
          command: `${BIN} capture --commit-hash ${hash} --title 'Change ${i}' --intent 'Problem: none. Solution: a file.' --tag FEATURE`,
          description: "summary",
        },
      };
    },
    { text: `Change ${i} is committed.` },
  ];
  const server = anthropicServer(script);
  try {
    const r = await claudePrint(repo, server, `Make change ${i} and commit it.`, ["--session-id", crypto.randomUUID()]);
    if (r.code !== 0) throw new Error(`claude exited ${r.code}: ${r.stderr.slice(0, 500)}`);
    if (server.remaining() !== 0) throw new Error(`the turn stopped early (${server.remaining()} steps left)`);
    if (unreminded) throw new Error("aiflare's reminder naming the new commit did not reach the model");
  } finally {
    server.stop();
  }
  const hooks: Turn["hooks"] = [];
  const times = new Map<string, number>();
  for (const line of readFileSync(log, "utf8").slice(before).split("\n")) {
    const [event, s, e] = line.split(" ");
    if (!event || !s || !e) continue;
    // an event that runs twice in the turn (post-tool-use: the commit, then the summary's command) is told apart
    const n = (times.get(event) ?? 0) + 1;
    times.set(event, n);
    hooks.push({ event: n === 1 ? event : `${event} #${n}`, ms: (Number(e) - Number(s)) * 1000 });
  }
  return { hooks, total: hooks.reduce((n, h) => n + h.ms, 0) };
}

/**
 * The real turn in four repositories alike but for their hooks' program: aiflare; the empty program; the floor of
 * any hook that records, a program built the same way that reads its payload, parses it and appends it to a file; and
 * the hand-off, a program that sends its payload to a listener running in a process of its own, which parses and
 * appends it and answers. The goal is judged against the empty program; the floor shows how much of the goal's margin is left for
 * aiflare's own work once a hook has read its payload and written a line, the hand-off what is left if that work were
 * done by a process already running.
 */
async function realTurnRows(
  empty: string,
  floor: string,
  handoff: { program: string; received: () => number },
): Promise<{ empty: number; handoff: number }> {
  ensureAgent("claude");
  const sides = ["aiflare", "empty", "floor", "handoff"] as const;
  const programs = { aiflare: BIN, empty, floor, handoff: handoff.program };
  const setup = await Promise.all(
    sides.map(async (side) => {
      const repo = tempRepo();
      repos.push(repo);
      livedInReflog(repo.root);
      settleClaudeHome(repo);
      await installAiflare(repo);
      const log = join(work, `${side}.log`);
      wrapHooks(repo, programs[side], log);
      return { side, repo, log };
    }),
  );
  const turns: Record<(typeof sides)[number], Turn[]> = { aiflare: [], empty: [], floor: [], handoff: [] };
  // one warm-up turn each (Claude Code's own first start in a repository), then rounds in rotating order
  let handedOff = 0;
  for (const s of setup) {
    const warm = await turn(s.repo, s.log, -1, s.side === "aiflare");
    if (s.side === "handoff") handedOff += warm.hooks.length;
  }
  for (let i = 0; i < TURNS; i++) {
    const order = setup.map((_, k) => setup[(k + i) % setup.length]!);
    for (const s of order) turns[s.side].push(await turn(s.repo, s.log, i, s.side === "aiflare"));
  }
  handedOff += turns.handoff.reduce((n, t) => n + t.hooks.length, 0);
  // a hand-off that failed to connect would exit at once and flatter itself
  if (handoff.received() !== handedOff) throw new Error(`the listener answered ${handoff.received()} of ${handedOff} hand-off hooks`);
  const total = (side: (typeof sides)[number]) => median(turns[side].map((t) => t.total));
  const [a, e, f, h] = [total("aiflare"), total("empty"), total("floor"), total("handoff")];
  const events = turns.aiflare[0]!.hooks.map((h) => h.event).join(", ");
  row(
    `a real Claude Code turn with one commit (${events}): hooks' time per turn`,
    `aiflare ${ms(a)}, the empty program in the same hooks ${ms(e)}: ${(a / e).toFixed(2)}×`,
    "≤ 1.5×",
    a / e <= 1.5,
  );
  console.log(
    `    the floor, a program that reads its payload and appends it to a file, in the same hooks: ${ms(f)}, ${(f / e).toFixed(2)}× ` +
      `the empty program; the goal leaves ${ms(Math.max(0, 1.5 * e - f))} a turn for aiflare's work above it, which takes ${ms(a - f)}`,
  );
  console.log(
    `    the hand-off, a program that sends its payload to a process already running and waits for its answer: ${ms(h)}, ` +
      `${(h / e).toFixed(2)}× the empty program, leaving ${ms(Math.max(0, 1.5 * e - h))} a turn for the resident process's work`,
  );
  for (const event of new Set(turns.aiflare[0]!.hooks.map((h) => h.event))) {
    const of = (side: (typeof sides)[number]) => median(turns[side].flatMap((t) => t.hooks.filter((h) => h.event === event).map((h) => h.ms)));
    const [ha, he, hf, hh] = [of("aiflare"), of("empty"), of("floor"), of("handoff")];
    row(
      `  hook ${event} in that turn`,
      `${ms(ha)} vs ${ms(he)}: ${(ha / he).toFixed(2)}× (the floor ${ms(hf)}, ${(hf / he).toFixed(2)}×; the hand-off ${ms(hh)}, ${(hh / he).toFixed(2)}×)`,
      "≤ 2×",
      ha / he <= 2,
    );
  }
  return { empty: e, handoff: h };
}

// ---------------------------------------------------------------------------------------------------------------
// the same hooks' work, warm

/**
 * The five hooks of the turn run one after another in this one long-lived process, the way a resident process would
 * run them once a hook had handed it the payload: aiflare's own code (src/core/hook/runner.ts) on the same kind of
 * payloads, in a repository set up like the turn's, its JIT warm and its modules loaded. The capture worker is not
 * started and its jobs are removed after each turn, untimed (a resident process would do that work after answering,
 * as the worker does now after the hook exits).
 * Printed with what the hand-off and this work would make of the turn: an estimate, not a goal row.
 */
async function warmRows(turn: { empty: number; handoff: number }): Promise<void> {
  const { runAgentHook } = await import("../src/core/hook/runner.ts");
  const repo = installedRepo();
  const env = { ...repo.env, AIFLARE_NO_CAPTURE_WORKER: "1" };
  const hook = async (event: AgentEvent, payload: Record<string, unknown>) => {
    const t0 = performance.now();
    const out = await runAgentHook({ agent: "claude", event, stdin: async () => ({ text: JSON.stringify(payload) }), env, cwd: repo.root });
    return { ms: performance.now() - t0, out };
  };
  const times = new Map<string, number[]>();
  const WARM_TURNS = 30;
  for (let i = 0; i < WARM_TURNS; i++) {
    const session = `warm-${i}`;
    const base = { session_id: session, cwd: repo.root, transcript_path: join(repo.home, "t.jsonl") };
    const ran: [string, number][] = [];
    ran.push(["session-start", (await hook("session-start", { ...base, hook_event_name: "SessionStart", source: "startup", model: "claude-sonnet-4-5" })).ms]);
    ran.push(["user-prompt-submit", (await hook("user-prompt-submit", { ...base, hook_event_name: "UserPromptSubmit", prompt: `Make change ${i} and commit it.` })).ms]);
    writeFileSync(join(repo.root, `change-${i}.txt`), `${i}\n`);
    repo.git("add", "-A");
    repo.git("commit", "-q", "-m", `feat: change ${i}`);
    const commit = await hook("post-tool-use", JSON.parse(commitHookPayload(session, repo.root, repo.home, i)) as Record<string, unknown>);
    // the hook found the commit and answered with its reminder, as it does in the turn
    if (!commit.out.includes("capture --commit-hash")) throw new Error("the warm commit hook did not find the commit");
    ran.push(["post-tool-use", commit.ms]);
    ran.push(["stop", (await hook("stop", { ...base, hook_event_name: "Stop", stop_hook_active: false, last_assistant_message: `Change ${i} is committed.` })).ms]);
    ran.push(["session-end", (await hook("session-end", { ...base, hook_event_name: "SessionEnd", reason: "other" })).ms]);
    // the jobs the worker would have taken (not timed): a queue that only grew would slow each next commit hook
    rmSync(join(repo.root, ".git", "aiflare", "queue"), { recursive: true, force: true });
    // the first turns warm the code up
    if (i >= 5) for (const [event, ms] of ran) times.set(event, [...(times.get(event) ?? []), ms]);
  }
  const each = [...times].map(([event, list]) => [event, median(list)] as const);
  const work = each.reduce((n, [, m]) => n + m, 0);
  console.log(
    `  the same hooks' work run warm in one long-lived process: ${ms(work)} a turn (${each.map(([event, m]) => `${event} ${m.toFixed(2)}`).join(", ")} ms); ` +
      `with the hand-off, a resident process would make the turn ≈${ms(turn.handoff + work)}, ${((turn.handoff + work) / turn.empty).toFixed(2)}× the empty program (an estimate)`,
  );
}

// ---------------------------------------------------------------------------------------------------------------
// the commit hook on its own

function ratioRow(what: string, runs: Run[], base: Run[], baseName: string, limit: number): void {
  const med = (rs: Run[], k: "wall" | "cpu") => median(rs.map((r) => r[k]));
  const wall = med(runs, "wall") / med(base, "wall");
  const cpu = med(runs, "cpu") / med(base, "cpu");
  row(
    what,
    `${ms(med(runs, "wall"))} (CPU ${ms(med(runs, "cpu"))}) vs ${baseName} ${ms(med(base, "wall"))} (CPU ${ms(med(base, "cpu"))}): ` +
      `${wall.toFixed(2)}× (CPU ${cpu.toFixed(2)}×)`,
    `≤ ${limit}×`,
    wall <= limit,
  );
}

function isolatedRows(append: string): void {
  const repo = installedRepo();
  const env = repo.env;
  // some history first: entries on the timeline, an index, a conversation
  const hook = (event: string, payload: Record<string, unknown>) =>
    run([BIN, "hook", event], { cwd: repo.root, env, stdin: JSON.stringify({ session_id: "bench-isolated", cwd: repo.root, hook_event_name: event, ...payload }) });
  let n = 0;
  const commitRun = () => {
    const i = n++;
    hook("user-prompt-submit", { prompt: `change ${i} `.repeat(30) });
    writeFileSync(join(repo.root, `change-${i}.txt`), `${i}\n`);
    repo.git("add", "-A");
    repo.git("commit", "-q", "-m", `feat: change ${i}`);
    return run([BIN, "hook", "post-tool-use"], { cwd: repo.root, env, stdin: commitHookPayload("bench-isolated", repo.root, repo.home, i) });
  };
  for (let i = 0; i < 5; i++) commitRun();
  const bash = (command: string, stderr = "") =>
    hook("post-tool-use", { tool_name: "Bash", tool_input: { command, description: "x" }, tool_response: { stdout: "", stderr, interrupted: false, isImage: false } });
  const appendRun = () => run([append]);
  const [commit, appended] = interleaved(15, [commitRun, appendRun]);
  ratioRow("commit hook (post-tool-use, one new commit), whole process", commit!, appended!, "a program that appends a line", 3);
  const [status, failedCommit, appended2] = interleaved(20, [
    () => bash("git status"),
    () => bash(`git commit -m "nothing here"`, "On branch main\nnothing to commit, working tree clean\n"),
    appendRun,
  ]);
  ratioRow("post-tool-use, git status", status!, appended2!, "a program that appends a line", 1.3);
  ratioRow("post-tool-use, a commit that made nothing", failedCommit!, appended2!, "a program that appends a line", 1.3);
}

// ---------------------------------------------------------------------------------------------------------------
// the hand-off: a hook whose work is done by a process already running

/**
 * A hook program that reads its payload with Bun's own API (no node:fs), sends it, newline-ended, to the listener on
 * `socket` and exits when the answer comes: the least a hook that hands its work to a resident process does.
 */
function handoffSource(socket: string): string {
  return `const text = (await Bun.stdin.text()).trim() + "\\n";
await new Promise((done) => {
  Bun.connect({
    unix: ${JSON.stringify(socket)},
    socket: {
      open(s) { s.write(text); },
      data(s) { s.end(); done(); },
      close: done,
      error: done,
      connectError: done,
    },
  });
});
`;
}

/**
 * The resident side, a process of its own as a resident process would be: each newline-ended payload is parsed,
 * appended to `out` and answered; `received` counts the payloads in `out`.
 */
async function handoffListener(socket: string, out: string) {
  const source = join(work, "listener.ts");
  writeFileSync(
    source,
    `import { appendFileSync } from "node:fs";
const pending = new WeakMap();
Bun.listen({
  unix: ${JSON.stringify(socket)},
  socket: {
    data(s, chunk) {
      const text = (pending.get(s) ?? "") + chunk.toString();
      if (!text.endsWith("\\n")) return void pending.set(s, text);
      appendFileSync(${JSON.stringify(out)}, JSON.stringify(JSON.parse(text)) + "\\n");
      s.end("ok\\n");
    },
  },
});
`,
  );
  writeFileSync(out, "");
  const proc = Bun.spawn([process.execPath, source], { stdout: "inherit", stderr: "inherit" });
  for (let waited = 0; !existsSync(socket); waited += 10) {
    if (waited > 10_000 || proc.exitCode !== null) throw new Error("the hand-off listener did not start");
    await Bun.sleep(10);
  }
  return {
    stop: () => proc.kill(),
    received: () => readFileSync(out, "utf8").split("\n").filter(Boolean).length,
  };
}

// ---------------------------------------------------------------------------------------------------------------

console.log(`machine: ${navigator.hardwareConcurrency} cores, load average at start ${load()}`);
try {
  mkdirSync(work, { recursive: true });
  const empty = await compileLikeAiflare(work, "empty", "export {};\n");
  const append = await compileLikeAiflare(
    work,
    "append",
    `import { appendFileSync } from "node:fs";\nappendFileSync(${JSON.stringify(join(work, "append.log"))}, "{}\\n");\n`,
  );
  appendFileSync(join(work, "append.log"), "");
  const floor = await compileLikeAiflare(
    work,
    "floor",
    `import { appendFileSync, readFileSync } from "node:fs";\n` +
      `appendFileSync(${JSON.stringify(join(work, "floor-payloads.log"))}, JSON.stringify(JSON.parse(readFileSync(0, "utf8"))) + "\\n");\n`,
  );
  const socket = join(work, "handoff.sock");
  const handoff = await compileLikeAiflare(work, "handoff", handoffSource(socket));
  const listener = await handoffListener(socket, join(work, "handoff-payloads.log"));
  console.log(`real Claude Code turns (${TURNS} of each kind, interleaved)`);
  try {
    const turn = await realTurnRows(empty, floor, { program: handoff, received: listener.received });
    await warmRows(turn);
  } finally {
    listener.stop();
  }
  console.log("the commit hook on its own");
  isolatedRows(append);
} finally {
  for (const r of repos) r.cleanup();
  rmSync(work, { recursive: true, force: true });
  console.log(`load average at the end ${load()}; ${rows - unmet} of ${rows} goals met`);
}
