/** Small timing helpers shared by the benchmark scripts. */
import { mkdtempSync, readFileSync, realpathSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { START_OPTIONS } from "../scripts/bundle.ts";
import { testEnv } from "../test/helpers.ts";

export function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

export function percentile(xs: number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)]!;
}

/** Wall time in ms of one whole process run. */
export function timeProcess(cmd: string[], opts: { cwd?: string; stdin?: string; env?: Record<string, string> } = {}): number {
  return runProcess(cmd, opts).wall;
}

/**
 * One whole process through GNU time (`/usr/bin/time`, installed by scripts/test-deps.sh): its peak resident memory
 * (MB), wall time (ms) and stdout (unless ignored). A small parent: a child started from a large benchmark process would count that
 * process's memory as its own. Throws on a non-zero exit.
 */
export function peakRss(
  cmd: string[],
  opts: { cwd?: string; env?: Record<string, string>; stdin?: string; stdout?: "pipe" | "ignore" } = {},
): { mb: number; ms: number; stdout: string } {
  const t0 = performance.now();
  const r = Bun.spawnSync(["/usr/bin/time", "-f", "%M", ...cmd], {
    cwd: opts.cwd,
    env: opts.env ?? (process.env as Record<string, string>),
    stdin: opts.stdin === undefined ? "ignore" : new Blob([opts.stdin]),
    stdout: opts.stdout ?? "pipe",
    stderr: "pipe",
  });
  const ms = performance.now() - t0;
  if (r.exitCode !== 0) throw new Error(`${cmd.join(" ")} exited ${r.exitCode}: ${r.stderr.toString().slice(0, 500)}`);
  const lines = r.stderr.toString().trim().split("\n");
  return { mb: Number(lines[lines.length - 1]) / 1024, ms, stdout: r.stdout?.toString() ?? "" };
}

/** Runs `fn` n times (after `warmup` runs) and returns the samples. */
export function sample(n: number, fn: (i: number) => number, warmup = 3): number[] {
  for (let i = 0; i < warmup; i++) fn(-1 - i);
  return Array.from({ length: n }, (_, i) => fn(i));
}

export function fmt(ms: number): string {
  return `${ms.toFixed(1)} ms`;
}

/** Prints one result row: name, median, p95, and the ratio against a baseline median. */
export function report(name: string, xs: number[], baseline?: number[], target?: string): void {
  const m = median(xs);
  const ratio = baseline ? `  ratio ${(m / median(baseline)).toFixed(2)}x vs baseline` : "";
  console.log(`${name.padEnd(44)} median ${fmt(m).padStart(10)}  p95 ${fmt(percentile(xs, 95)).padStart(10)}  n=${xs.length}${ratio}${target ? `  (target ${target})` : ""}`);
}

export function tempDir(prefix = "aiflare-bench-"): string {
  return realpathSync(mkdtempSync(join(tmpdir(), prefix)));
}

/** The PostToolUse payload Claude Code sends after its Bash tool ran `git commit -q -m "feat: hook change <i>"`. */
export function commitHookPayload(session: string, cwd: string, home: string, i: number): string {
  return JSON.stringify({
    session_id: session,
    transcript_path: join(home, "t.jsonl"),
    cwd,
    permission_mode: "default",
    hook_event_name: "PostToolUse",
    tool_name: "Bash",
    tool_input: { command: `git add -A && git commit -q -m "feat: hook change ${i}"`, description: "commit" },
    tool_response: { stdout: "", stderr: "", interrupted: false, isImage: false },
    tool_use_id: `toolu_${i}`,
  });
}

/** Starts `aiflare serve` (the binary `bin`, no rate limit, plus `extra`) on a free port and waits for its URL. */
export async function startServe(bin: string, database: string, home: string, extra: string[] = []) {
  const proc = Bun.spawn([bin, "serve", "--port", "0", "--rate-limit", "0", "--database", database, ...extra], { env: testEnv(home), stdout: "pipe", stderr: "inherit" });
  const reader = proc.stdout.getReader();
  let out = "";
  let url = "";
  while (!url) {
    const { done, value } = await reader.read();
    if (done) throw new Error(`serve exited: ${out}`);
    out += new TextDecoder().decode(value);
    url = /listening on (http:\/\/\S+)/.exec(out)?.[1] ?? "";
  }
  void (async () => {
    while (!(await reader.read()).done);
  })();
  return { url, stop: async () => (proc.kill("SIGTERM"), await proc.exited) };
}

/**
 * Compiles `source` as a whole executable with the build's start-up options (scripts/bundle.ts): the programs a hook
 * is compared with start the way aiflare does.
 */
export async function compileLikeAiflare(dir: string, name: string, source: string): Promise<string> {
  const entry = join(dir, `${name}.ts`);
  const outfile = join(dir, name);
  writeFileSync(entry, source);
  const r = await Bun.build({
    entrypoints: [entry],
    format: "esm",
    minify: true,
    bytecode: true,
    target: "bun",
    compile: { outfile, ...START_OPTIONS },
  });
  if (!r.success) throw new Error(`building ${name}: ${r.logs.join("\n")}`);
  return outfile;
}

/** A process's wall time and CPU time (user + system, ms) and what it printed. */
export interface Run {
  wall: number;
  cpu: number;
  stdout: string;
}

/** One whole process: wall time and CPU time (ms). Throws on a non-zero exit. */
export function runProcess(cmd: string[], opts: { cwd?: string; stdin?: string; env?: Record<string, string> } = {}): Run {
  const t0 = performance.now();
  const r = Bun.spawnSync(cmd, {
    cwd: opts.cwd,
    env: opts.env ?? (process.env as Record<string, string>),
    stdin: opts.stdin === undefined ? "ignore" : new Blob([opts.stdin]),
    stdout: "pipe",
    stderr: "pipe",
  });
  const wall = performance.now() - t0;
  if (r.exitCode !== 0) throw new Error(`${cmd.join(" ")} exited ${r.exitCode}: ${r.stderr.toString().slice(0, 500)}`);
  const cpu = r.resourceUsage ? Number(r.resourceUsage.cpuTime.user + r.resourceUsage.cpuTime.system) / 1000 : Number.NaN;
  return { wall, cpu, stdout: r.stdout.toString() };
}

/** Runs each of `fns` `n` times, interleaved (after one warm-up round); returns each one's runs. */
export function interleaved(n: number, fns: ((i: number) => Run)[]): Run[][] {
  for (const f of fns) f(-1);
  const out = fns.map(() => [] as Run[]);
  for (let i = 0; i < n; i++) fns.forEach((f, j) => out[j]!.push(f(i)));
  return out;
}

/**
 * Gives a fresh repository the HEAD reflog of one that has been worked in for two months (1,500 lines: commits,
 * branch switches, pulls, rebases, resets, as `git reflog` shows them), before its own lines. A hook that reads the
 * reflog pays here what it pays in the user's repository, not what a repository made a second ago costs.
 */
export function livedInReflog(root: string, lines = 1500): void {
  const path = join(root, ".git", "logs", "HEAD");
  const hex = (n: number) => (n * 2654435761 % 2 ** 32).toString(16).padStart(8, "0").repeat(5);
  const start = Math.floor(Date.now() / 1000) - 60 * 86400;
  const areas = ["parser", "sync queue", "session log", "index rebuild", "dashboard cards", "auth tokens", "redaction rules", "install"];
  const messages = (i: number): string => {
    const area = areas[i % areas.length]!;
    switch (i % 9) {
      case 0:
        return `checkout: moving from main to feat/${area.replace(/ /g, "-")}-${i}`;
      case 1:
        return "pull --ff-only: Fast-forward";
      case 2:
        return `rebase (finish): returning to refs/heads/feat/${area.replace(/ /g, "-")}-${i - 2}`;
      case 3:
        return "reset: moving to HEAD~1";
      case 4:
        return `merge origin/main: Merge made by the 'ort' strategy.`;
      default:
        return `commit: ${["fix", "feat", "refactor", "test"][i % 4]}(${area}): handle the case ${i} found in review`;
    }
  };
  let text = "";
  for (let i = 0; i < lines; i++) {
    text += `${hex(i)} ${hex(i + 1)} Dev Eloper <dev@example.com> ${start + i * 3000} +0100\t${messages(i)}\n`;
  }
  let own = "";
  try {
    own = readFileSync(path, "utf8");
  } catch {
    // no line yet
  }
  writeFileSync(path, text + own);
}
