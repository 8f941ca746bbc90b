import { readdirSync, readFileSync, statSync } from "node:fs";
import { homedir } from "node:os";
import { join, resolve } from "node:path";
import { gitSync } from "../../util/git.ts";
import { jsonlRecords } from "./events.ts";
import { peekCodexMeta } from "./codex.ts";
import { peekCopilotCwd } from "./copilot.ts";
import type { AgentName } from "../../agents/types.ts";

/*
 * Where past sessions of a repository are: Claude Code keeps `<config dir>/projects/<cwd with every
 * non-alphanumeric character as ->/<session>.jsonl` (config dir: `$CLAUDE_CONFIG_DIR`, else `~/.claude`); Codex
 * keeps `~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl` (`$CODEX_HOME`), with the cwd in the session meta; the other
 * agents' stores are described at their finders below. A session belongs to the repository when its own cwd is one
 * of the repository's working trees or inside one (Cursor's transcripts name none: their folder does).
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

/** The cwd a transcript names on its first lines that carry one (Claude Code, Qwen Code, Factory Droid). */
async function firstCwd(path: string): Promise<string | null> {
  let n = 0;
  for await (const rec of jsonlRecords(path)) {
    if (typeof rec.cwd === "string") return rec.cwd;
    if (++n > 50) break;
  }
  return null;
}

/**
 * Transcripts under `<projects>/<encoded cwd>/<sub>/*.jsonl` whose own cwd is in the repository: the folder names
 * of a root and of its subdirectories start with the root's encoding, but so does a sibling's (`app` and
 * `app-web`), and another directory can encode the same (`/x/w/app` and `/x/w_app`): the transcript's cwd decides.
 */
async function findProjectTranscripts(
  projects: string,
  sub: string,
  roots: string[],
  encode: (cwd: string) => string,
  agent: AgentName,
): Promise<FoundTranscript[]> {
  const prefixes = roots.map(encode);
  const out: FoundTranscript[] = [];
  for (const name of listDir(projects)) {
    if (!prefixes.some((p) => name === p || name.startsWith(`${p}-`))) continue;
    const dir = join(projects, name, sub);
    for (const file of listDir(dir)) {
      if (!file.endsWith(".jsonl") || file.endsWith(".ledger.jsonl")) continue;
      const path = join(dir, file);
      const info = fileInfo(path);
      if (!info?.isFile) continue;
      const cwd = await firstCwd(path);
      if (!cwd || !insideRoots(cwd, roots)) continue;
      out.push({ path, agent, mtimeMs: info.mtimeMs });
    }
  }
  return out;
}

/** Claude Code transcripts of the repository's working trees and their subdirectories. */
export function findClaudeTranscripts(roots: string[], env: Record<string, string | undefined>): Promise<FoundTranscript[]> {
  const config = env.CLAUDE_CONFIG_DIR || join(env.HOME || homedir(), ".claude");
  return findProjectTranscripts(join(config, "projects"), "", roots, encodeProjectDir, "claude");
}

/** Qwen Code chats: `<QWEN_RUNTIME_DIR, QWEN_HOME or ~/.qwen>/projects/<encoded cwd>/chats/<session>.jsonl`. */
export function findQwenChats(roots: string[], env: Record<string, string | undefined>): Promise<FoundTranscript[]> {
  const base = env.QWEN_RUNTIME_DIR || env.QWEN_HOME || join(env.HOME || homedir(), ".qwen");
  return findProjectTranscripts(join(base, "projects"), "chats", roots, encodeProjectDir, "qwen");
}

/** Factory Droid sessions: `~/.factory/sessions/<cwd with / as ->/<session>.jsonl`, the cwd in their first line. */
export function findDroidSessions(roots: string[], env: Record<string, string | undefined>): Promise<FoundTranscript[]> {
  return findProjectTranscripts(join(env.HOME || homedir(), ".factory", "sessions"), "", roots, (cwd) => cwd.replace(/\//g, "-"), "droid");
}

/** Cursor's folder name for a workspace: the path without its leading `/`, every other non-alphanumeric as `-`. */
export function cursorProjectDir(cwd: string): string {
  return cwd.replace(/^\/+/, "").replace(/[^A-Za-z0-9]/g, "-");
}

/**
 * Cursor agent transcripts of the repository's working trees: `~/.cursor/projects/<workspace>/agent-transcripts/`,
 * `<id>.jsonl` (the CLI) or `<id>/<id>.jsonl` (the IDE). The transcript names no folder of its own, so only a
 * working tree's own folder name counts (a subdirectory opened as the workspace is not found).
 */
export function findCursorTranscripts(roots: string[], env: Record<string, string | undefined>): FoundTranscript[] {
  const projects = join(env.HOME || homedir(), ".cursor", "projects");
  const out: FoundTranscript[] = [];
  for (const root of roots) {
    const dir = join(projects, cursorProjectDir(root), "agent-transcripts");
    for (const name of listDir(dir)) {
      const path = name.endsWith(".jsonl") ? join(dir, name) : join(dir, name, `${name}.jsonl`);
      const info = fileInfo(path);
      if (info?.isFile) out.push({ path, agent: "cursor", mtimeMs: info.mtimeMs, cwd: root });
    }
  }
  return out;
}

/** GitHub Copilot CLI sessions: `<COPILOT_HOME or ~/.copilot>/session-state/<id>/events.jsonl`, the cwd in `session.start`. */
export async function findCopilotSessions(roots: string[], env: Record<string, string | undefined>): Promise<FoundTranscript[]> {
  const base = join(env.COPILOT_HOME || join(env.HOME || homedir(), ".copilot"), "session-state");
  const out: FoundTranscript[] = [];
  for (const name of listDir(base)) {
    const path = join(base, name, "events.jsonl");
    const info = fileInfo(path);
    if (!info?.isFile) continue;
    const cwd = await peekCopilotCwd(path);
    if (cwd && insideRoots(cwd, roots)) out.push({ path, agent: "copilot", mtimeMs: info.mtimeMs });
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

/** Which agent wrote a transcript given by path, from the shape of its first lines. */
export async function sniffAgent(path: string): Promise<AgentName> {
  let n = 0;
  for await (const rec of jsonlRecords(path)) {
    if (rec.type === "session_meta" || (rec.type === "response_item" && rec.payload)) return "codex";
    if (typeof rec.projectHash === "string" || "$set" in rec) return "gemini";
    if (typeof rec.type === "string" && rec.type.includes(".") && rec.data && typeof rec.data === "object") return "copilot";
    if (rec.type === "session_start" || (rec.type === "message" && rec.message)) return "droid";
    const message = rec.message as { parts?: unknown } | undefined;
    if (message && Array.isArray(message.parts)) return "qwen";
    if (typeof rec.role === "string" && message && rec.type === undefined) return "cursor";
    if (typeof rec.sessionId === "string" || rec.message) return "claude";
    if (++n > 20) break;
  }
  return "claude";
}
