import { AiflareError } from "../errors.ts";

export interface GitResult {
  code: number;
  stdout: Uint8Array;
  stderr: string;
}

/** Runs git with `args` and returns its raw output; never throws for a non-zero exit. */
export async function execGit(args: string[], opts: { cwd?: string; stdin?: Uint8Array | string } = {}): Promise<GitResult> {
  const proc = Bun.spawn(["git", ...args], {
    cwd: opts.cwd,
    stdin: opts.stdin === undefined ? "ignore" : new Blob([opts.stdin]),
    stdout: "pipe",
    stderr: "pipe",
    env: { ...process.env, GIT_TERMINAL_PROMPT: "0", GIT_OPTIONAL_LOCKS: "0" },
  });
  const [stdout, stderr, code] = await Promise.all([
    new Response(proc.stdout).arrayBuffer(),
    new Response(proc.stderr).text(),
    proc.exited,
  ]);
  return { code, stdout: new Uint8Array(stdout), stderr };
}

/** Runs git and returns stdout as text; a non-zero exit becomes a GIT error carrying git's message. */
export async function gitText(args: string[], opts: { cwd?: string; stdin?: Uint8Array | string } = {}): Promise<string> {
  const r = await execGit(args, opts);
  if (r.code !== 0) {
    const msg = r.stderr.trim().split("\n").pop() || `exit ${r.code}`;
    throw new AiflareError("GIT", `git ${args[0] === "--git-dir" ? args[2] : args[0]} failed: ${msg}`, {
      data: { args, code: r.code },
    });
  }
  return new TextDecoder().decode(r.stdout);
}

/**
 * Reads many blobs with one `git cat-file --batch`. Returns oid → bytes; missing objects are left out.
 */
export async function readBlobs(gitDir: string, oids: string[]): Promise<Map<string, Uint8Array>> {
  const out = new Map<string, Uint8Array>();
  if (oids.length === 0) return out;
  const r = await execGit(["--git-dir", gitDir, "cat-file", "--batch"], { stdin: `${oids.join("\n")}\n` });
  if (r.code !== 0) throw new AiflareError("GIT", `git cat-file failed: ${r.stderr.trim()}`);
  const buf = r.stdout;
  let pos = 0;
  while (pos < buf.length) {
    const nl = buf.indexOf(10, pos);
    if (nl < 0) break;
    const header = new TextDecoder().decode(buf.subarray(pos, nl));
    pos = nl + 1;
    const [oid, type, sizeText] = header.split(" ");
    if (type === "missing" || sizeText === undefined || oid === undefined) continue;
    const size = Number(sizeText);
    out.set(oid, buf.subarray(pos, pos + size));
    pos += size + 1;
  }
  return out;
}
