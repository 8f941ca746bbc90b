/**
 * Codex runs a project's hooks only once the user has reviewed them: it keeps each approval as
 * `[hooks.state."<key>"] trusted_hash = "sha256:…"` in `$CODEX_HOME/config.toml` (default `~/.codex`), and a hook
 * whose command changed since (a reinstall elsewhere, the binary moved) is "modified" and does not run. `codex exec`
 * says nothing about hooks it skips. Codex itself lists its hooks, their keys, current hashes and trust status
 * through `codex app-server` (`hooks/list`); this module reads that list, and records approvals of aiflare's own
 * hooks exactly as Codex's review would, only when the user asks for it on the command line.
 */
import { existsSync, readFileSync } from "node:fs";
import { delimiter, join } from "node:path";
import { AiflareError } from "../../errors.ts";
import { atomicWrite, realTarget } from "../fsutil.ts";

export interface CodexHook {
  key: string;
  eventName: string;
  command: string | null;
  sourcePath: string | null;
  currentHash: string;
  trustStatus: string;
}

export interface CodexHookList {
  hooks: CodexHook[];
  /** Codex's own warnings, e.g. that the project is not trusted so its hooks are not loaded */
  warnings: string[];
}

/** Codex's configuration directory: `$CODEX_HOME`, else `~/.codex`. */
export function codexHome(env: Record<string, string | undefined>): string {
  return env.CODEX_HOME || join(env.HOME ?? "", ".codex");
}

/** The `codex` executable on PATH, or undefined. */
export function findCodex(env: Record<string, string | undefined>): string | undefined {
  for (const dir of (env.PATH ?? "").split(delimiter)) {
    if (!dir) continue;
    const p = join(dir, "codex");
    if (existsSync(p)) return p;
  }
  return undefined;
}

/** Asks Codex (`codex app-server`, JSON-RPC over stdio) which hooks it sees for `cwd` and whether each is trusted. */
export async function listCodexHooks(
  codex: string,
  cwd: string,
  env: Record<string, string | undefined>,
  timeoutMs = 20_000,
): Promise<CodexHookList> {
  const proc = Bun.spawn([codex, "app-server"], { cwd, env, stdin: "pipe", stdout: "pipe", stderr: "ignore" });
  const send = (msg: unknown) => proc.stdin.write(`${JSON.stringify(msg)}\n`);
  const timer = setTimeout(() => proc.kill(), timeoutMs);
  const warnings: string[] = [];
  try {
    send({ jsonrpc: "2.0", id: 1, method: "initialize", params: { clientInfo: { name: "aiflare", version: "1" } } });
    send({ jsonrpc: "2.0", method: "initialized" });
    send({ jsonrpc: "2.0", id: 2, method: "hooks/list", params: { cwds: [cwd], cwd } });
    await proc.stdin.flush();
    const decoder = new TextDecoder();
    let buf = "";
    for await (const chunk of proc.stdout) {
      buf += decoder.decode(chunk, { stream: true });
      let nl: number;
      while ((nl = buf.indexOf("\n")) >= 0) {
        const line = buf.slice(0, nl);
        buf = buf.slice(nl + 1);
        let msg: any;
        try {
          msg = JSON.parse(line);
        } catch {
          continue;
        }
        if (msg.method === "configWarning" && typeof msg.params?.summary === "string") warnings.push(msg.params.summary.trim());
        if (msg.id !== 2) continue;
        if (msg.error) throw new AiflareError("AGENT", `codex app-server: ${msg.error.message ?? "hooks/list failed"}`);
        const hooks: CodexHook[] = [];
        for (const group of msg.result?.data ?? []) {
          for (const w of group.warnings ?? []) if (typeof w === "string") warnings.push(w);
          for (const h of group.hooks ?? []) if (typeof h?.key === "string" && typeof h?.currentHash === "string") hooks.push(h);
        }
        return { hooks, warnings };
      }
    }
    throw new AiflareError("AGENT", "codex app-server ended without listing its hooks");
  } finally {
    clearTimeout(timer);
    proc.kill();
  }
}

/** aiflare's own hooks among Codex's: from this repository's `.codex/hooks.json`, calling `<bin> hook …`. */
export function aiflareHooks(list: CodexHookList, hooksFile: string, binQuoted: string): CodexHook[] {
  return list.hooks.filter((h) => h.sourcePath === hooksFile && typeof h.command === "string" && h.command.startsWith(`${binQuoted} hook `));
}

const tomlString = (s: string) => `"${s.replace(/\\/g, "\\\\").replace(/"/g, '\\"')}"`;

/**
 * `config.toml` with `trusted_hash` set for each hook: an existing `[hooks.state."<key>"]` table gets its line
 * replaced (or added); a new table is appended. Everything else in the file stays byte for byte.
 */
export function withApprovals(text: string, hooks: { key: string; currentHash: string }[]): string {
  const lines = text.length === 0 ? [] : text.replace(/\n$/, "").split("\n");
  const appended: string[] = [];
  for (const h of hooks) {
    const header = `[hooks.state.${tomlString(h.key)}]`;
    const value = `trusted_hash = ${tomlString(h.currentHash)}`;
    const at = lines.findIndex((l) => l.trim() === header);
    if (at < 0) {
      appended.push("", header, value);
      continue;
    }
    let end = at + 1;
    while (end < lines.length && !lines[end]!.trim().startsWith("[")) end++;
    const existing = lines.slice(at + 1, end).findIndex((l) => /^\s*trusted_hash\s*=/.test(l));
    if (existing >= 0) lines[at + 1 + existing] = value;
    else lines.splice(at + 1, 0, value);
  }
  const out = [...lines, ...appended];
  while (out[0] === "") out.shift();
  return `${out.join("\n")}\n`;
}

export interface ApprovalResult {
  configPath: string;
  approved: CodexHook[];
  /** why nothing could be approved, when nothing was */
  problem?: string;
}

/** Records the approval of aiflare's hooks in this repository in the user's Codex config, as Codex's review would. */
export async function approveCodexHooks(
  root: string,
  binQuoted: string,
  env: Record<string, string | undefined>,
): Promise<ApprovalResult> {
  const configPath = join(codexHome(env), "config.toml");
  const codex = findCodex(env);
  if (!codex) return { configPath, approved: [], problem: "codex is not on PATH, so its hook hashes cannot be read" };
  const list = await listCodexHooks(codex, root, env);
  const ours = aiflareHooks(list, join(root, ".codex", "hooks.json"), binQuoted);
  if (ours.length === 0) {
    const untrustedProject = list.warnings.find((w) => /trusted project|until the project is trusted/i.test(w));
    return {
      configPath,
      approved: [],
      problem: untrustedProject
        ? `Codex does not load this repository's hooks until the project is trusted (add [projects."${root}"] trust_level = "trusted" to ${configPath}, or trust it when Codex asks)`
        : "Codex lists none of aiflare's hooks for this repository",
    };
  }
  const before = existsSync(configPath) ? readFileSync(configPath, "utf8") : "";
  const after = withApprovals(before, ours);
  // the user's own file: a symlink to their dotfiles is followed, and the file keeps its mode (else owner-only)
  if (after !== before) atomicWrite(realTarget(configPath), after, before === "" ? 0o600 : undefined);
  return { configPath, approved: ours };
}
