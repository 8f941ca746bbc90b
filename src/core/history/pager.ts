/** Shows long output through a pager, the way git does. */

export interface Terminal {
  isTTY: boolean;
  rows: number;
  env: Record<string, string | undefined>;
  write(text: string): Promise<void>;
}

/** The pager command git would use: `$GIT_PAGER`, then `$PAGER`, then `less`; "" or "cat" means none. */
export function pagerCommand(env: Record<string, string | undefined>): string | null {
  const cmd = env.AIFLARE_PAGER ?? env.GIT_PAGER ?? env.PAGER ?? "less";
  const trimmed = cmd.trim();
  return trimmed === "" || trimmed === "cat" ? null : trimmed;
}

/**
 * Writes `text`, through a pager when stdout is a terminal and the text is taller than it. `less` gets
 * `LESS=FRX` unless the user set LESS, so short output and colours behave as in git.
 */
export async function pageOrWrite(text: string, term: Terminal, opts: { pager: boolean }): Promise<void> {
  const lines = text.split("\n").length - 1;
  const cmd = opts.pager && term.isTTY && lines >= term.rows ? pagerCommand(term.env) : null;
  if (!cmd) return term.write(text);
  let proc;
  try {
    proc = Bun.spawn(["sh", "-c", cmd], {
      stdin: "pipe",
      stdout: "inherit",
      stderr: "inherit",
      env: { ...term.env, LESS: term.env.LESS ?? "FRX", LV: term.env.LV ?? "-c" },
    });
  } catch {
    return term.write(text);
  }
  try {
    proc.stdin.write(text);
    await proc.stdin.end();
  } catch {
    // the user quit the pager before reading everything
  }
  await proc.exited;
}
