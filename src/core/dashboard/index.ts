/** `aiflare ui`: finds the repository, starts the local dashboard, opens a browser when one is at hand. */
import { rmSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { randomBytes } from "node:crypto";
import { AiflareError } from "../../errors.ts";
import { ensureContextDir, writeOwnFile } from "../fsutil.ts";
import { findRepo } from "../repo.ts";
import { startLocalDashboard, type LocalDashboard } from "./server.ts";

export interface UiOptions {
  cwd: string;
  port: number;
  assets: (pathname: string, acceptEncoding: string | null) => Response | null;
}

export interface Ui extends LocalDashboard {
  /** Opens the dashboard in the desktop's browser; false when no opener exists (a server, a container). */
  open(platform?: NodeJS.Platform): boolean;
}

/** Starts the dashboard over the repository at `cwd`. */
export function startUi(opts: UiOptions): Ui {
  const repo = findRepo(opts.cwd);
  if (!repo) throw new AiflareError("NOT_A_REPO", `${opts.cwd} is not inside a git repository. Run aiflare ui from your project.`);
  if (!Number.isInteger(opts.port) || opts.port < 0 || opts.port > 65535) {
    throw new AiflareError("INVALID_ARGUMENT", `--port must be a port number (0 picks a free one), not "${opts.port}".`);
  }
  let dashboard: LocalDashboard;
  try {
    dashboard = startLocalDashboard({ repo, port: opts.port, assets: opts.assets });
  } catch (err) {
    const inUse = /EADDRINUSE|in use/i.test(String((err as Error)?.message ?? err));
    throw new AiflareError(
      "INVALID_ARGUMENT",
      inUse ? `Port ${opts.port} is in use; pick another with --port, or --port 0 for any free one.` : `Cannot start the dashboard: ${String(err)}`,
      { cause: err },
    );
  }
  const launchers = new Set<string>();
  return {
    ...dashboard,
    open(platform = process.platform) {
      let file: string;
      try {
        file = join(ensureContextDir(repo.root), `ui-open-${randomBytes(6).toString("hex")}.html`);
      } catch {
        return false;
      }
      const drop = () => {
        rmSync(file, { force: true });
        launchers.delete(file);
      };
      launchers.add(file);
      try {
        writeOwnFile(file, launcherHtml(dashboard.singleUseUrl(drop)));
        if (openInBrowser(pathToFileURL(file).href, platform)) return true;
      } catch {
        // an unwritable context directory: the printed URL still works
      }
      drop();
      return false;
    },
    stop() {
      for (const file of launchers) rmSync(file, { force: true });
      dashboard.stop();
    },
  };
}

/**
 * The page a browser is opened at. A browser is started with its URL on its command line, which every local user
 * can read in /proc for as long as the browser runs, so that URL must hold no secret: it names this file, which
 * only the user can read (0600, in the repository's 0700 `.context-capture/`), and which sends the browser on to
 * the dashboard with a single-use code in the fragment. The file is deleted once the code is used, or when
 * `aiflare ui` stops.
 */
function launcherHtml(url: string): string {
  const href = url.replace(/&/g, "&amp;").replace(/"/g, "&quot;").replace(/</g, "&lt;");
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="referrer" content="no-referrer">
<meta http-equiv="refresh" content="0;url=${href}"><title>aiflare</title></head>
<body><p><a href="${href}">Open the aiflare dashboard</a></p></body></html>
`;
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
