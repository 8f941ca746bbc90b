/** `aiflare ui`: finds the repository, starts the local dashboard, opens a browser when one is at hand. */
import { AiflareError } from "../../errors.ts";
import { findRepo } from "../repo.ts";
import { startLocalDashboard, type LocalDashboard } from "./server.ts";

export interface UiOptions {
  cwd: string;
  port: number;
  assets: (pathname: string, acceptEncoding: string | null) => Response | null;
}

/** Starts the dashboard over the repository at `cwd`. */
export function startUi(opts: UiOptions): LocalDashboard {
  const repo = findRepo(opts.cwd);
  if (!repo) throw new AiflareError("NOT_A_REPO", `${opts.cwd} is not inside a git repository. Run aiflare ui from your project.`);
  if (!Number.isInteger(opts.port) || opts.port < 0 || opts.port > 65535) {
    throw new AiflareError("INVALID_ARGUMENT", `--port must be a port number (0 picks a free one), not "${opts.port}".`);
  }
  try {
    return startLocalDashboard({ repo, port: opts.port, assets: opts.assets });
  } catch (err) {
    const inUse = /EADDRINUSE|in use/i.test(String((err as Error)?.message ?? err));
    throw new AiflareError(
      "INVALID_ARGUMENT",
      inUse ? `Port ${opts.port} is in use; pick another with --port, or --port 0 for any free one.` : `Cannot start the dashboard: ${String(err)}`,
      { cause: err },
    );
  }
}

/** Asks the desktop to open `url`; false when no opener exists (a server, a container). */
export function openInBrowser(url: string, platform = process.platform): boolean {
  const opener = platform === "darwin" ? "open" : platform === "win32" ? "explorer.exe" : "xdg-open";
  if (!Bun.which(opener)) return false;
  try {
    Bun.spawn([opener, url], { stdin: "ignore", stdout: "ignore", stderr: "ignore" }).unref();
    return true;
  } catch {
    return false;
  }
}
