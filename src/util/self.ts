/** Starting this same aiflare again, detached, for work a hook hands off instead of waiting for it. */

/** The command line that runs this same aiflare (the compiled binary, or bun with the script in development). */
function selfCommand(): string[] {
  const main = Bun.main;
  return main.startsWith("/$bunfs/") || main.startsWith("B:\\~BUN\\") ? [process.execPath] : [process.execPath, main];
}

/**
 * Starts `aiflare <args…>` detached from this process, which may exit at once; its stdout and stderr go to `output`
 * (an open file descriptor) or nowhere. Returns its pid.
 */
export function startDetachedSelf(
  args: string[],
  opts: { cwd: string; env: Record<string, string | undefined>; output?: number },
): number {
  const out = opts.output ?? "ignore";
  const proc = Bun.spawn([...selfCommand(), ...args], {
    cwd: opts.cwd,
    env: opts.env as Record<string, string>,
    stdin: "ignore",
    stdout: out,
    stderr: out,
    detached: true,
  });
  proc.unref();
  return proc.pid;
}
