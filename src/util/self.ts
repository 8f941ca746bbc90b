/** Starting this same aiflare again, detached, for work a hook hands off instead of waiting for it. */

/**
 * Set in the environment of a process started by `startDetachedSelf`: main.ts lowers its priority first thing, so that
 * work handed off by a hook runs on what the agent and its next hooks leave of the cores, not beside them.
 */
export const BACKGROUND_ENV = "AIFLARE_BACKGROUND";
/** The niceness of such a process: well below the agent's, without starving it when the cores are busy. */
export const BACKGROUND_NICE = 10;

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
    env: { ...opts.env, [BACKGROUND_ENV]: "1" } as Record<string, string>,
    stdin: "ignore",
    stdout: out,
    stderr: out,
    detached: true,
  });
  proc.unref();
  return proc.pid;
}
