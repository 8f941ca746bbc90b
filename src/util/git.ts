/** Running git: the one place aiflare starts a git process and reads what it prints. */
import { AiflareError } from "../errors.ts";
import { isFullHash } from "./ids.ts";

type Env = Record<string, string | undefined>;

export interface GitOptions {
  cwd?: string;
  stdin?: Uint8Array | string;
  /** the environment git runs in (default: this process's) */
  env?: Env;
  /** execGit only: git is killed after this long (its result then has a non-zero code) */
  timeoutMs?: number;
}

export interface GitResult {
  code: number;
  stdout: Uint8Array;
  stderr: string;
}

/** Never prompt for credentials, and never take the index lock just to refresh it: aiflare only reads. */
function gitEnv(env: Env | undefined): Env {
  return { ...(env ?? process.env), GIT_TERMINAL_PROMPT: "0", GIT_OPTIONAL_LOCKS: "0" };
}

/** Runs git with `args` and returns its raw output; never throws for a non-zero exit. */
export async function execGit(args: string[], opts: GitOptions = {}): Promise<GitResult> {
  const proc = Bun.spawn(["git", ...args], {
    cwd: opts.cwd,
    stdin: opts.stdin === undefined ? "ignore" : new Blob([opts.stdin]),
    stdout: "pipe",
    stderr: "pipe",
    env: gitEnv(opts.env),
  });
  const timer = opts.timeoutMs === undefined ? undefined : setTimeout(() => proc.kill("SIGKILL"), opts.timeoutMs);
  try {
    const [stdout, stderr, code] = await Promise.all([
      new Response(proc.stdout).arrayBuffer(),
      new Response(proc.stderr).text(),
      proc.exited,
    ]);
    return { code, stdout: new Uint8Array(stdout), stderr };
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Runs git and keeps at most `maxBytes` of what it prints: past that git is stopped, so a huge output (a
 * generated file's patch) costs no more memory than the cap. `truncated` says output was cut.
 */
export async function execGitCapped(args: string[], maxBytes: number, opts: GitOptions = {}): Promise<GitResult & { truncated: boolean }> {
  const proc = Bun.spawn(["git", ...args], { cwd: opts.cwd, stdin: "ignore", stdout: "pipe", stderr: "pipe", env: gitEnv(opts.env) });
  const chunks: Uint8Array[] = [];
  let size = 0;
  let truncated = false;
  const reader = proc.stdout.getReader();
  const stderr = new Response(proc.stderr).text();
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    if (size + value.length > maxBytes) {
      chunks.push(value.subarray(0, maxBytes - size));
      size = maxBytes;
      truncated = true;
      proc.kill("SIGKILL");
      void reader.cancel().catch(() => {});
      break;
    }
    chunks.push(value);
    size += value.length;
  }
  const out = new Uint8Array(size);
  let at = 0;
  for (const c of chunks) {
    out.set(c, at);
    at += c.length;
  }
  const code = await proc.exited;
  return { code: truncated ? 0 : code, stdout: out, stderr: await stderr, truncated };
}

/** Runs git and waits for it, for short commands; output as bytes; never throws for a non-zero exit. */
export function gitSyncRaw(args: string[], opts: GitOptions = {}): GitResult {
  const r = Bun.spawnSync(["git", ...args], {
    cwd: opts.cwd,
    stdin: opts.stdin === undefined ? "ignore" : Buffer.from(opts.stdin),
    stdout: "pipe",
    stderr: "pipe",
    env: gitEnv(opts.env),
  });
  return { code: r.exitCode ?? 1, stdout: r.stdout, stderr: r.stderr.toString() };
}

/** Runs git and waits for it, for short commands; output as text; never throws for a non-zero exit. */
export function gitSync(args: string[], opts: GitOptions = {}): { code: number; stdout: string; stderr: string } {
  const r = gitSyncRaw(args, opts);
  return { code: r.code, stdout: Buffer.from(r.stdout).toString(), stderr: r.stderr };
}

/** The full hash of the commit `name` names in the repository at `cwd` (a hash prefix, HEAD~2, a branch…), or null. */
export function revParseCommit(cwd: string, name: string): string | null {
  const r = gitSync(["rev-parse", "--verify", "--quiet", "--end-of-options", `${name}^{commit}`], { cwd });
  const hash = r.stdout.trim();
  return r.code === 0 && isFullHash(hash) ? hash : null;
}

/** One object from `git cat-file --batch` output. */
export interface BatchObject {
  type: string;
  content: Uint8Array;
}

/** Parses `git cat-file --batch` output into oid → object; missing objects are left out. */
export function parseCatFileBatch(buf: Uint8Array): Map<string, BatchObject> {
  const out = new Map<string, BatchObject>();
  const decoder = new TextDecoder();
  let pos = 0;
  while (pos < buf.length) {
    const nl = buf.indexOf(10, pos);
    if (nl < 0) break;
    const [oid, type, sizeText] = decoder.decode(buf.subarray(pos, nl)).split(" ");
    pos = nl + 1;
    if (type === "missing" || sizeText === undefined || oid === undefined || type === undefined) continue;
    const size = Number(sizeText);
    out.set(oid, { type, content: buf.subarray(pos, pos + size) });
    pos += size + 1;
  }
  return out;
}

/**
 * Reads many blobs with one `git cat-file --batch`. Returns oid → bytes; missing objects are left out.
 */
export async function readBlobs(gitDir: string, oids: string[]): Promise<Map<string, Uint8Array>> {
  const out = new Map<string, Uint8Array>();
  if (oids.length === 0) return out;
  const r = await execGit(["--git-dir", gitDir, "cat-file", "--batch"], { stdin: `${oids.join("\n")}\n` });
  if (r.code !== 0) throw new AiflareError("GIT", `git cat-file failed: ${r.stderr.trim()}`);
  for (const [oid, obj] of parseCatFileBatch(r.stdout)) out.set(oid, obj.content);
  return out;
}

/** Objects asked of one `git cat-file` at a time: git writes ahead of the reader, so this bounds what is buffered. */
const STREAM_BATCH = 1000;

/**
 * Streams objects out of `git cat-file --batch`, calling `onObject` for each in the order asked, while git is
 * still writing: memory holds one batch's output at most, not all of it. An `onObject` that returns a promise is
 * awaited before more is read. Missing objects are skipped.
 */
export async function streamBlobs(
  gitDir: string,
  oids: string[],
  onObject: (oid: string, content: Uint8Array) => void | Promise<void>,
): Promise<void> {
  for (let i = 0; i < oids.length; i += STREAM_BATCH) await streamBatch(gitDir, oids.slice(i, i + STREAM_BATCH), onObject);
}

async function streamBatch(
  gitDir: string,
  oids: string[],
  onObject: (oid: string, content: Uint8Array) => void | Promise<void>,
): Promise<void> {
  const proc = Bun.spawn(["git", "--git-dir", gitDir, "cat-file", "--batch"], {
    stdin: new Blob([`${oids.join("\n")}\n`]),
    stdout: "pipe",
    stderr: "pipe",
    env: gitEnv(undefined),
  });
  const stderr = new Response(proc.stderr).text();
  const decoder = new TextDecoder();
  let buf = new Uint8Array(0);
  let need = 0; // bytes the next record needs before it can be parsed
  let waits: Promise<void>[] = [];
  const parse = () => {
    let pos = 0;
    for (;;) {
      const nl = buf.indexOf(10, pos);
      if (nl < 0) break;
      const [oid, type, sizeText] = decoder.decode(buf.subarray(pos, nl)).split(" ");
      if (type === "missing" || sizeText === undefined || oid === undefined) {
        pos = nl + 1;
        continue;
      }
      const end = nl + 1 + Number(sizeText);
      if (end + 1 > buf.length) {
        need = end + 1 - pos;
        break;
      }
      const done = onObject(oid, buf.subarray(nl + 1, end));
      if (done) waits.push(done);
      pos = end + 1;
    }
    buf = buf.subarray(pos);
  };
  let pending: Uint8Array[] = [];
  let pendingBytes = 0;
  for await (const chunk of proc.stdout as ReadableStream<Uint8Array>) {
    pending.push(chunk);
    pendingBytes += chunk.byteLength;
    if (buf.length + pendingBytes < need) continue;
    buf = Buffer.concat([buf, ...pending]);
    pending = [];
    pendingBytes = 0;
    need = 0;
    parse();
    if (waits.length) {
      await Promise.all(waits);
      waits = [];
    }
  }
  if (pending.length) {
    buf = Buffer.concat([buf, ...pending]);
    parse();
    await Promise.all(waits);
  }
  const code = await proc.exited;
  if (code !== 0) throw new AiflareError("GIT", `git cat-file failed: ${(await stderr).trim()}`);
}

/** The sizes of many objects, from one `git cat-file --batch-check` (nothing is inflated); missing ones left out. */
export async function blobSizes(gitDir: string, oids: string[]): Promise<Map<string, number>> {
  const out = new Map<string, number>();
  if (oids.length === 0) return out;
  const r = await execGit(["--git-dir", gitDir, "cat-file", "--batch-check"], { stdin: `${oids.join("\n")}\n` });
  if (r.code !== 0) throw new AiflareError("GIT", `git cat-file failed: ${r.stderr.trim()}`);
  for (const line of new TextDecoder().decode(r.stdout).split("\n")) {
    const [oid, type, size] = line.split(" ");
    if (oid && type && type !== "missing" && size !== undefined) out.set(oid, Number(size));
  }
  return out;
}
