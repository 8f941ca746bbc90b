import { readdirSync, readFileSync, statSync } from "node:fs";
import { homedir } from "node:os";
import { join, resolve } from "node:path";
import { gitSync } from "../../util/git.ts";
import { jsonlRecords } from "./events.ts";
import { peekCodexMeta } from "./codex.ts";
import type { AgentName } from "../../agents/types.ts";

/*
 * Where past sessions of a repository are: Claude Code keeps `<config dir>/projects/<cwd with every
 * non-alphanumeric character as ->/<session>.jsonl` (config dir: `$CLAUDE_CONFIG_DIR`, else `~/.claude`); Codex
 * keeps `~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl` (`$CODEX_HOME`), with the cwd in the session meta. A
 * session belongs to the repository when its cwd is one of the repository's working trees or inside one.
 */

export interface FoundTranscript {
  path: string;
  agent: AgentName;
  mtimeMs: number;
  /** the project folder the agent ran in, when the transcript does not say (Gemini CLI) */
  cwd?: string;
  /** the session within `path`, when one file holds many (OpenCode's database) */
  sessionId?: string;
}

/** Claude Code's project directory name for a working directory. */
export function encodeProjectDir(cwd: string): string {
  return cwd.replace(/[^A-Za-z0-9]/g, "-");
}

/** The repository's working trees: the main one and every linked worktree. */
export function worktreeRoots(root: string): string[] {
  const out = new Set<string>([resolve(root)]);
  const r = gitSync(["worktree", "list", "--porcelain"], { cwd: root });
  if (r.code === 0) for (const m of r.stdout.matchAll(/^worktree (.+)$/gm)) out.add(resolve(m[1]!));
  return [...out];
}

/** True when `cwd` is one of `roots` or inside one. */
export function insideRoots(cwd: string, roots: string[]): boolean {
  const c = resolve(cwd);
  return roots.some((r) => c === r || c.startsWith(r.endsWith("/") ? r : `${r}/`));
}

function listDir(dir: string): string[] {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
}

function fileInfo(path: string): { isFile: boolean; mtimeMs: number } | null {
  try {
    const st = statSync(path);
    return { isFile: st.isFile(), mtimeMs: st.mtimeMs };
  } catch {
    return null;
  }
}

/** The cwd a Claude Code transcript names on its first lines that carry one. */
async function claudeCwd(path: string): Promise<string | null> {
  let n = 0;
  for await (const rec of jsonlRecords(path)) {
    if (typeof rec.cwd === "string") return rec.cwd;
    if (++n > 50) break;
  }
  return null;
}

/** Claude Code transcripts of the repository's working trees and their subdirectories. */
export async function findClaudeTranscripts(roots: string[], env: Record<string, string | undefined>): Promise<FoundTranscript[]> {
  const config = env.CLAUDE_CONFIG_DIR || join(env.HOME || homedir(), ".claude");
  const projects = join(config, "projects");
  const prefixes = roots.map(encodeProjectDir);
  const out: FoundTranscript[] = [];
  for (const name of listDir(projects)) {
    // a subdirectory's name starts like its root's, but so does a sibling's (`app` and `app-web`), and the name of
    // another directory can be the same (`/x/w/app` and `/x/w_app`): the transcript's own cwd decides
    if (!prefixes.some((p) => name === p || name.startsWith(`${p}-`))) continue;
    const dir = join(projects, name);
    for (const file of listDir(dir)) {
      if (!file.endsWith(".jsonl")) continue;
      const path = join(dir, file);
      const info = fileInfo(path);
      if (!info?.isFile) continue;
      const cwd = await claudeCwd(path);
      if (!cwd || !insideRoots(cwd, roots)) continue;
      out.push({ path, agent: "claude", mtimeMs: info.mtimeMs });
    }
  }
  return out;
}

/** Codex rollouts whose session cwd is in the repository. */
export async function findCodexRollouts(roots: string[], env: Record<string, string | undefined>, sinceMs?: number): Promise<FoundTranscript[]> {
  const base = join(env.CODEX_HOME || join(env.HOME || homedir(), ".codex"), "sessions");
  const out: FoundTranscript[] = [];
  const walk = async (dir: string, depth: number): Promise<void> => {
    for (const name of listDir(dir).sort()) {
      const path = join(dir, name);
      if (depth < 3) {
        await walk(path, depth + 1);
        continue;
      }
      if (!/^rollout-.*\.jsonl$/.test(name)) continue;
      const info = fileInfo(path);
      if (!info?.isFile || (sinceMs !== undefined && info.mtimeMs < sinceMs)) continue;
      const meta = await peekCodexMeta(path);
      if (meta.cwd && insideRoots(meta.cwd, roots)) out.push({ path, agent: "codex", mtimeMs: info.mtimeMs });
    }
  };
  await walk(base, 0);
  return out;
}

/**
 * Gemini CLI chats of the repository: `<GEMINI_CLI_HOME or ~>/.gemini/tmp/<project>/chats/session-*.jsonl`, where
 * `<project>/.project_root` names the folder Gemini ran in.
 */
export function findGeminiChats(roots: string[], env: Record<string, string | undefined>): FoundTranscript[] {
  const base = join(env.GEMINI_CLI_HOME || env.HOME || homedir(), ".gemini", "tmp");
  const out: FoundTranscript[] = [];
  for (const name of listDir(base)) {
    let cwd: string;
    try {
      cwd = readFileSync(join(base, name, ".project_root"), "utf8").trim();
    } catch {
      continue;
    }
    if (!cwd || !insideRoots(cwd, roots)) continue;
    const dir = join(base, name, "chats");
    for (const file of listDir(dir)) {
      if (!file.startsWith("session-") || !file.endsWith(".jsonl")) continue;
      const path = join(dir, file);
      const info = fileInfo(path);
      if (info?.isFile) out.push({ path, agent: "gemini", mtimeMs: info.mtimeMs, cwd });
    }
  }
  return out;
}

/** Which agent wrote a transcript given by path: Codex rollouts start with `session_meta`. */
export async function sniffAgent(path: string): Promise<AgentName> {
  let n = 0;
  for await (const rec of jsonlRecords(path)) {
    if (rec.type === "session_meta" || (rec.type === "response_item" && rec.payload)) return "codex";
    if (typeof rec.projectHash === "string" || "$set" in rec) return "gemini";
    if (typeof rec.sessionId === "string" || rec.message) return "claude";
    if (++n > 20) break;
  }
  return "claude";
}
