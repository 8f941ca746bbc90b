/**
 * A hostile repository, as a developer gets it: the attacker commits symlinks and settings to an upstream, the
 * victim clones it with real git into a temp dir beside a fake HOME that holds the files an attack would aim at.
 * Snapshots of that HOME before and after show whether anything outside the repository changed.
 */
import { lstatSync, mkdirSync, readdirSync, readFileSync, readlinkSync, realpathSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { testEnv, type TempRepo } from "../helpers.ts";

/** A committed file: text, or a symlink to `link` (relative, as an attacker would commit it). */
export type HostileFile = string | { link: string };

/** Any control character a terminal acts on (C0 but tab and newline, DEL, C1). */
export const CONTROL_RE = /[\x00-\x08\x0b-\x1f\x7f-\x9f]/;

/** The escape sequences a hostile backend or entry carries: window title, clear screen, clipboard write. */
export const EVIL = "\x1b]0;pwned\x07\x1b[2J\x1b]52;c;ZWNobyBwd25lZA==\x07";

/** The files of the fake HOME an attack would aim at. */
const HOME_FILES: Record<string, string> = {
  ".claude/CLAUDE.md": "# my global agent memory\n",
  ".claude/settings.json": '{\n  "permissions": {}\n}\n',
  "CLAUDE.md": "# home CLAUDE.md\n",
  ".gitignore": "*.swp\n",
  ".bashrc": "export SECRET_IN_BASHRC=do-not-store-me\n",
  "notes.txt": "private notes: do-not-store-me\n",
  ".githooks/keep": "",
};

function write(root: string, files: Record<string, HostileFile>): void {
  for (const [rel, f] of Object.entries(files)) {
    const path = join(root, rel);
    mkdirSync(dirname(path), { recursive: true });
    rmSync(path, { force: true });
    if (typeof f === "string") writeFileSync(path, f);
    else symlinkSync(f.link, path);
  }
}

function run(cwd: string, env: Record<string, string>, ...args: string[]): string {
  const r = Bun.spawnSync(["git", ...args], { cwd, env });
  if (r.exitCode !== 0) throw new Error(`git ${args.join(" ")} failed: ${r.stderr.toString()}`);
  return r.stdout.toString().trim();
}

/**
 * Clones a repository whose upstream commits `files` (symlinks included) into `<dir>/repo`, beside the fake HOME
 * `<dir>/home`. The clone's origin is a bare repository in `<dir>`, so `git push` runs the real pre-push hook.
 */
export function hostileClone(files: Record<string, HostileFile>): TempRepo {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), "aiflare-hostile-")));
  const home = join(dir, "home");
  const env = testEnv(home, { XDG_CONFIG_HOME: join(home, ".config") });
  write(home, HOME_FILES);
  const upstream = join(dir, "upstream.git");
  const attacker = join(dir, "attacker");
  mkdirSync(attacker);
  run(dir, env, "init", "-q", "--bare", "-b", "main", upstream);
  run(attacker, env, "init", "-q", "-b", "main");
  write(attacker, { "README.md": "# a useful project\n", ...files });
  run(attacker, env, "add", "-A");
  run(attacker, env, "commit", "-q", "-m", "initial commit");
  run(attacker, env, "push", "-q", upstream, "main");
  const root = join(dir, "repo");
  run(dir, env, "clone", "-q", upstream, root);
  let n = 0;
  const tryGit = (...args: string[]) => {
    const r = Bun.spawnSync(["git", ...args], { cwd: root, env });
    return { code: r.exitCode ?? 1, stdout: r.stdout.toString(), stderr: r.stderr.toString() };
  };
  return {
    dir,
    root,
    home,
    env,
    tryGit,
    git: (...args) => run(root, env, ...args),
    commit(message, content) {
      write(root, content ?? { [`file${++n}.txt`]: `content ${n}\n` });
      run(root, env, "add", "-A");
      run(root, env, "commit", "-q", "-m", message);
      return run(root, env, "rev-parse", "HEAD");
    },
    cleanup: () => rmSync(dir, { recursive: true, force: true }),
  };
}

/** Every path under `dir` with its kind, mode and content or link target; links are not followed. */
export function snapshot(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (d: string, rel: string) => {
    for (const name of readdirSync(d).sort()) {
      const path = join(d, name);
      const r = rel ? `${rel}/${name}` : name;
      const st = lstatSync(path);
      const mode = (st.mode & 0o7777).toString(8);
      if (st.isSymbolicLink()) out[r] = `link ${readlinkSync(path)}`;
      else if (st.isDirectory()) {
        out[r] = `dir ${mode}`;
        walk(path, r);
      } else out[r] = `file ${mode} ${readFileSync(path, "utf8")}`;
    }
  };
  walk(dir, "");
  return out;
}

/** Control characters in `text` (none expected in anything printed for a person). */
export function controls(text: string): string[] {
  return [...text].filter((c) => CONTROL_RE.test(c)).map((c) => `\\x${c.charCodeAt(0).toString(16).padStart(2, "0")}`);
}
