/**
 * An agent's interactive client in a pseudo-terminal (tmux, on its own server socket): what only the interactive
 * client does — answering AskUserQuestion, /clear — is driven the way a person does it, by keys, reading the screen.
 */
import { ensureAgent } from "./install.ts";

export class Tui {
  private readonly socket: string;
  private constructor(socket: string) {
    this.socket = socket;
  }

  /** Starts `argv` in a 160×50 terminal in `cwd` with exactly `env`. */
  static start(argv: string[], cwd: string, env: Record<string, string>): Tui {
    const socket = `aiflare-tui-${process.pid}-${Math.random().toString(36).slice(2, 8)}`;
    const envArgs = Object.entries(env).flatMap(([k, v]) => ["-e", `${k}=${v}`]);
    const quoted = argv.map((a) => `'${a.replace(/'/g, `'\\''`)}'`).join(" ");
    const r = Bun.spawnSync(["tmux", "-L", socket, "-f", "/dev/null", "new-session", "-d", "-s", "agent", "-x", "160", "-y", "50", "-c", cwd, ...envArgs, quoted]);
    if (r.exitCode !== 0) throw new Error(`tmux: ${r.stderr.toString()}`);
    return new Tui(socket);
  }

  private tmux(...args: string[]) {
    return Bun.spawnSync(["tmux", "-L", this.socket, ...args], { stdout: "pipe", stderr: "pipe" });
  }

  /** What the terminal shows now. */
  screen(): string {
    return this.tmux("capture-pane", "-p", "-t", "agent").stdout.toString();
  }

  /** Whether the program is still running. */
  alive(): boolean {
    return this.tmux("has-session", "-t", "agent").exitCode === 0;
  }

  /** Waits until `done` holds (a text on screen, or a condition), polling; throws with the screen after `ms`. */
  async waitFor(done: string | RegExp | (() => boolean), ms = 45_000): Promise<void> {
    const check = () =>
      typeof done === "function" ? done() : typeof done === "string" ? this.screen().includes(done) : done.test(this.screen());
    const until = Date.now() + ms;
    while (Date.now() < until) {
      if (check()) return;
      await Bun.sleep(150);
    }
    throw new Error(`timed out waiting for ${String(done)}; the screen:\n${this.alive() ? this.screen() : "(exited)"}`);
  }

  /** Types `text` into the prompt, waits until it shows, and submits it with Enter. */
  async submit(text: string): Promise<void> {
    this.tmux("send-keys", "-t", "agent", "-l", text);
    await this.waitFor(text.slice(0, 40));
    await Bun.sleep(200);
    this.tmux("send-keys", "-t", "agent", "Enter");
  }

  /** Presses one key (tmux key names: Enter, Down, Escape, C-d …). */
  key(name: string): void {
    this.tmux("send-keys", "-t", "agent", name);
  }

  /**
   * Presses `name` in a dialog showing `shown`, again while it stays on the screen (a few times at most): a key sent
   * while the program is still setting the dialog up can be lost.
   */
  async press(name: string, shown: string, tries = 5): Promise<void> {
    await this.waitFor(shown);
    for (let i = 0; i < tries && this.screen().includes(shown); i++) {
      this.key(name);
      await this.waitFor(() => !this.screen().includes(shown), 3_000).catch(() => {});
    }
  }

  /**
   * Ends the program with `/exit` (so its SessionEnd hooks run) and waits for it to leave; kills it otherwise. Never
   * throws: it also runs as a cleanup after a failed test, whatever the screen shows then.
   */
  async exit(): Promise<void> {
    if (this.alive()) {
      try {
        await this.submit("/exit");
        await this.waitFor(() => !this.alive(), 30_000);
      } catch {
        // killed below
      }
    }
    this.tmux("kill-server");
  }
}

/** Claude Code's interactive client in a terminal, permission prompts bypassed. */
export function claudeTui(cwd: string, env: Record<string, string>, extra: string[] = []): Tui {
  return Tui.start([ensureAgent("claude"), "--permission-mode", "bypassPermissions", ...extra], cwd, env);
}
