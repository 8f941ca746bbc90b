/** Shared helpers for end-to-end tests: the compiled binary, temp repositories, real git. */
import { existsSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";

export const ROOT = resolve(import.meta.dir, "..");
export const BIN = join(ROOT, "dist", "aiflare");
export const FIXTURES = resolve(ROOT, "test", "fixtures", "claude-code");

let built = false;
/** Path of the compiled binary, building it once if `bun run test` did not. */
export function binary(): string {
  if (!built && !existsSync(BIN)) {
    const r = Bun.spawnSync(["bun", "run", "build"], { cwd: ROOT, stdout: "ignore", stderr: "inherit" });
    if (r.exitCode !== 0) throw new Error("bun run build failed");
  }
  built = true;
  return BIN;
}

/** A machine-independent environment: own HOME, no system git config, a fixed git identity. */
export function testEnv(home: string, extra: Record<string, string> = {}): Record<string, string> {
  return {
    PATH: process.env.PATH ?? "/usr/bin:/bin",
    HOME: home,
    GIT_CONFIG_NOSYSTEM: "1",
    GIT_AUTHOR_NAME: "Test Author",
    GIT_AUTHOR_EMAIL: "author@example.com",
    GIT_COMMITTER_NAME: "Test Committer",
    GIT_COMMITTER_EMAIL: "committer@example.com",
    NO_COLOR: "1",
    TZ: "UTC",
    ...extra,
  };
}

export interface TempRepo {
  /** the temp dir owned by the test (holds home/ and repo/) */
  dir: string;
  root: string;
  home: string;
  env: Record<string, string>;
  git(...args: string[]): string;
  /** runs `git` and returns exit code and output without throwing */
  tryGit(...args: string[]): { code: number; stdout: string; stderr: string };
  /** writes a file, stages everything and commits; returns the full hash */
  commit(message: string, files?: Record<string, string>): string;
  cleanup(): void;
}

/** Creates a fresh repository (branch main, one initial commit unless `empty`). */
export function tempRepo(opts: { empty?: boolean } = {}): TempRepo {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), "aiflare-test-")));
  const home = join(dir, "home");
  const root = join(dir, "repo");
  Bun.spawnSync(["mkdir", "-p", home, root]);
  const env = testEnv(home);
  const tryGit = (...args: string[]) => {
    const r = Bun.spawnSync(["git", ...args], { cwd: root, env });
    return { code: r.exitCode ?? 1, stdout: r.stdout.toString(), stderr: r.stderr.toString() };
  };
  const git = (...args: string[]) => {
    const r = tryGit(...args);
    if (r.code !== 0) throw new Error(`git ${args.join(" ")} failed: ${r.stderr}`);
    return r.stdout.trim();
  };
  git("init", "-q", "-b", "main");
  let n = 0;
  const repo: TempRepo = {
    dir,
    root,
    home,
    env,
    git,
    tryGit,
    commit(message, files) {
      const content = files ?? { [`file${++n}.txt`]: `content ${n} ${message}\n` };
      for (const [name, text] of Object.entries(content)) {
        const path = join(root, name);
        Bun.spawnSync(["mkdir", "-p", join(path, "..")]);
        require("node:fs").writeFileSync(path, text);
      }
      git("add", "-A");
      git("commit", "-q", "-m", message);
      return git("rev-parse", "HEAD");
    },
    cleanup() {
      rmSync(dir, { recursive: true, force: true });
    },
  };
  if (!opts.empty) repo.commit("initial commit", { "README.md": "# test\n" });
  return repo;
}

export interface RunResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs the compiled binary with the given args, stdin text, cwd and env. */
export async function runBin(
  args: string[],
  opts: { cwd: string; env: Record<string, string>; stdin?: string | Uint8Array; timeoutMs?: number },
): Promise<RunResult> {
  const proc = Bun.spawn([binary(), ...args], {
    cwd: opts.cwd,
    env: opts.env,
    stdin: opts.stdin === undefined ? "ignore" : new Blob([opts.stdin]),
    stdout: "pipe",
    stderr: "pipe",
  });
  const timer = setTimeout(() => proc.kill("SIGKILL"), opts.timeoutMs ?? 20_000);
  const [stdout, stderr, code] = await Promise.all([
    new Response(proc.stdout).text(),
    new Response(proc.stderr).text(),
    proc.exited,
  ]);
  clearTimeout(timer);
  return { code, stdout, stderr };
}

/** The capture queue of the repository holding `dir` (its `.git` a directory): where hooks leave work for the worker. */
export function captureQueueDir(dir: string): string | null {
  for (let d = resolve(dir); ; d = resolve(d, "..")) {
    const git = join(d, ".git");
    if (existsSync(join(git, "HEAD"))) return join(git, "aiflare", "queue");
    if (d === "/") return null;
  }
}

/** The jobs waiting in the capture queue of the repository holding `dir`. */
export function queuedCaptureJobs(dir: string): string[] {
  const queue = captureQueueDir(dir);
  if (!queue || !existsSync(queue)) return [];
  return readdirSync(queue).filter((n) => n.endsWith(".job"));
}

/** True while a job waits that no worker tried yet, or a worker is at the queue. */
function captureBusy(dir: string): boolean {
  const queue = captureQueueDir(dir);
  if (!queue || !existsSync(queue)) return false;
  if (existsSync(join(queue, "drain.lock"))) return true;
  for (const name of queuedCaptureJobs(dir)) {
    try {
      if (!(JSON.parse(readFileSync(join(queue, name), "utf8")) as { tries?: number }).tries) return true;
    } catch {
      // done and removed meanwhile
    }
  }
  return false;
}

/**
 * Waits until the capture worker a hook started is done with what the hook queued (at most 60 s): stored, or tried
 * and left queued for a later try.
 */
export async function captureSettled(dir: string): Promise<void> {
  for (const started = Date.now(); captureBusy(dir); ) {
    if (Date.now() - started > 60_000) throw new Error(`capture queue of ${dir} not drained: ${queuedCaptureJobs(dir).join(", ")}`);
    await Bun.sleep(20);
  }
}

/**
 * Runs `aiflare hook <event>` with a JSON payload, as an agent would; then waits for the capture worker the hook may
 * have started (what the hook stores, as the agent sees it, is stored once the worker is done), unless the
 * environment tells the hook to start none.
 */
export async function runHook(
  repo: TempRepo,
  event: string,
  payload: unknown,
  opts: { cwd?: string; env?: Record<string, string>; agent?: string } = {},
): Promise<RunResult> {
  const args = ["hook", event, ...(opts.agent ? ["--agent", opts.agent] : [])];
  const cwd = opts.cwd ?? repo.root;
  const env = { ...repo.env, ...opts.env };
  const result = await runBin(args, { cwd, env, stdin: typeof payload === "string" ? payload : JSON.stringify(payload) });
  if (!env.AIFLARE_NO_CAPTURE_WORKER) await captureSettled(cwd);
  return result;
}

/**
 * Conversation lines as recorded, each checked to carry the time it was said (`at`, ISO-8601, as the hooks write
 * it), returned without that time so that a test can compare what was said.
 */
export function untimed<T extends object>(lines: T[]): Omit<T, "at">[] {
  return lines.map((line) => {
    const { at, ...rest } = line as T & { at?: unknown };
    if (typeof at !== "string" || !/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/.test(at) || !Number.isFinite(Date.parse(at))) {
      throw new Error(`conversation line without its time: ${JSON.stringify(line).slice(0, 200)}`);
    }
    return rest as Omit<T, "at">;
  });
}
