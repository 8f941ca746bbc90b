/** Shared pieces of the capture e2e tests: real Claude Code payloads re-addressed to a temp repository. */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { FIXTURES, runBin, runHook, type RunResult, type TempRepo } from "../helpers.ts";

const LOGS = join(FIXTURES, "CoorpAcademy__serverless-plugins", "logs");
const read = (p: string) => JSON.parse(readFileSync(join(LOGS, p), "utf8")) as Record<string, unknown>[];

const promptTemplate = read("user_prompt_submit.json")[0]!;
/** Recorded Claude Code payloads of the lifecycle events, to re-address to a temp repository. */
export const stopTemplate = read("abc7156b-6420-4373-a150-9b2eecad6805/stop.json")[0]!;
export const startTemplate = read("session_start.json")[0]!;
const postToolUse = read("abc7156b-6420-4373-a150-9b2eecad6805/post_tool_use.json");
const bashTemplate = postToolUse.find((p) => p.tool_name === "Bash")!;
const askTemplate = postToolUse.find((p) => p.tool_name === "AskUserQuestion")!;
export const endTemplate = read("session_end.json")[0]!;

/** Drives one agent session against a temp repository through the compiled binary (`env` added to the hooks'). */
export function session(repo: TempRepo, sessionId: string, env: Record<string, string> = {}) {
  const base = { session_id: sessionId, cwd: repo.root, transcript_path: join(repo.home, "none.jsonl") };
  const hook = (event: string, payload: unknown) => runHook(repo, event, payload, { env });
  return {
    prompt: (prompt: string) => hook("user-prompt-submit", { ...promptTemplate, ...base, prompt }),
    stop: (message: string) => hook("stop", { ...stopTemplate, ...base, stop_hook_active: false, last_assistant_message: message }),
    ask: () => hook("post-tool-use", { ...askTemplate, ...base }),
    /** the PostToolUse the agent's Bash tool sends after running `command` */
    bash: (command: string, stdout = "", cwd = repo.root): Promise<RunResult> =>
      hook("post-tool-use", {
        ...bashTemplate,
        ...base,
        cwd,
        tool_input: { command, description: "commit" },
        tool_response: { stdout, stderr: "", interrupted: false, isImage: false, noOutputExpected: false },
      }),
    start: (source = "startup") => hook("session-start", { ...startTemplate, ...base, source }),
    end: () => hook("session-end", { ...endTemplate, ...base }),
  };
}

/** Commits with real git as the agent's Bash tool would, returning the hash and git's output. */
export function agentCommit(repo: TempRepo, message: string, files: Record<string, string>): { hash: string; stdout: string } {
  for (const [name, text] of Object.entries(files)) {
    Bun.spawnSync(["mkdir", "-p", join(repo.root, name, "..")]);
    require("node:fs").writeFileSync(join(repo.root, name), text);
  }
  repo.git("add", "-A");
  const r = repo.tryGit("commit", "-m", message);
  if (r.code !== 0) throw new Error(r.stderr);
  return { hash: repo.git("rev-parse", "HEAD"), stdout: r.stdout };
}

/** The entry of a commit as real git shows it on the timeline branch, or null. */
export function showEntry(repo: TempRepo, hash: string, cwd = repo.root): Record<string, any> | null {
  const r = Bun.spawnSync(["git", "show", `aiflare/timeline/v1:entries/${hash.slice(0, 2)}/${hash.slice(2)}.json`], {
    cwd,
    env: repo.env,
  });
  return r.exitCode === 0 ? JSON.parse(r.stdout.toString()) : null;
}

/** Paths of all entries on the timeline, by real git. */
export function timelinePaths(repo: TempRepo): string[] {
  const r = repo.tryGit("ls-tree", "-r", "--name-only", "aiflare/timeline/v1");
  return r.code === 0 ? r.stdout.split("\n").filter(Boolean) : [];
}

export function capture(repo: TempRepo, args: string[], env: Record<string, string> = {}, cwd = repo.root) {
  return runBin(["capture", ...args], { cwd, env: { ...repo.env, ...env } });
}

export function fsckClean(repo: TempRepo): boolean {
  return repo.tryGit("fsck", "--strict", "--no-dangling").code === 0;
}

/**
 * A session's whole stored transcript, read with plain git as the README shows: the fan-out directory is the first
 * two hex digits of the SHA-1 of the id, and the segments are concatenated in name order.
 */
export function storedTranscript(repo: TempRepo, sessionId: string): string {
  const fan = new Bun.CryptoHasher("sha1").update(sessionId).digest("hex").slice(0, 2);
  const dir = `sessions/${fan}/${sessionId}/`;
  const names = repo.tryGit("ls-tree", "--name-only", "aiflare/sessions/v1", dir).stdout.split("\n").filter(Boolean);
  return names.map((n) => repo.git("show", `aiflare/sessions/v1:${n}`) + "\n").join("");
}

/** The `{role, content}` records of a JSONL text. */
export function records(text: string): { role: string; content: string }[] {
  return text
    .split("\n")
    .filter((l) => l.trim())
    .map((l) => {
      const { role, content } = JSON.parse(l);
      return { role, content };
    });
}

/** Makes `n` commits on a side branch with git fast-import and returns their hashes. */
export function manyCommits(r: TempRepo, n: number): string[] {
  let stream = "";
  for (let i = 0; i < n; i++) {
    const data = `file ${i}\n`;
    const msg = `feat: change ${i}\n`;
    stream += `commit refs/heads/many\ncommitter Dev <dev@example.com> ${1700000000 + i} +0000\ndata ${msg.length}\n${msg}`;
    if (i === 0) stream += "from refs/heads/main\n";
    stream += `M 100644 inline f${i}.txt\ndata ${data.length}\n${data}\n`;
  }
  const imp = Bun.spawnSync(["git", "fast-import", "--quiet"], { cwd: r.root, env: r.env, stdin: Buffer.from(stream) });
  if (imp.exitCode !== 0) throw new Error(imp.stderr.toString());
  return r.git("rev-list", "--max-count", String(n), "many").split("\n");
}

/** Every object reachable from every aiflare branch (commits, trees, blobs), as real git prints them. */
export function aiflareObjects(repo: TempRepo): { refs: string[]; count: number; text: string } {
  const refs = repo.git("for-each-ref", "--format=%(refname)", "refs/heads/aiflare/").split("\n").filter(Boolean);
  if (refs.length === 0) return { refs, count: 0, text: "" };
  const oids = repo
    .git("rev-list", "--objects", ...refs)
    .split("\n")
    .map((l) => l.split(" ")[0]!)
    .filter(Boolean);
  const r = Bun.spawnSync(["git", "cat-file", "--batch"], { cwd: repo.root, env: repo.env, stdin: Buffer.from(`${oids.join("\n")}\n`) });
  if (r.exitCode !== 0) throw new Error(`git cat-file failed: ${r.stderr.toString()}`);
  return { refs, count: oids.length, text: r.stdout.toString() };
}

/** `text` holds `secret` as it is or inside one or two levels of JSON strings. */
export function holdsSecret(text: string, secret: string): boolean {
  const once = JSON.stringify(secret).slice(1, -1);
  const twice = JSON.stringify(once).slice(1, -1);
  return text.includes(secret) || text.includes(once) || text.includes(twice);
}

/** Keeps aiflare.yml and the live files out of the user's commits, as `install` arranges. */
export function excludeLocalFiles(repo: TempRepo): void {
  writeFileSync(join(repo.root, ".git", "info", "exclude"), "aiflare.yml\n.context-capture/\n");
}

type Rec = Record<string, unknown>;

/** A commit a real transcript shows git making: its subject, when, on which branch. */
export interface ShownCommit {
  subject: string;
  time: string;
  branch: string;
}

/** The commits a Claude Code transcript shows its Bash tool making (`[branch sha] subject` in git's output). */
export function commitsShownIn(path: string): ShownCommit[] {
  const uses = new Map<string, string>();
  const out: ShownCommit[] = [];
  for (const line of readFileSync(path, "utf8").split("\n")) {
    let rec: Rec;
    try {
      rec = JSON.parse(line);
    } catch {
      continue;
    }
    if (rec.isSidechain) continue;
    const content = (rec.message as Rec | undefined)?.content;
    if (!Array.isArray(content)) continue;
    for (const b of content as Rec[]) {
      if (b.type === "tool_use" && b.name === "Bash") uses.set(String(b.id), String((b.input as Rec).command ?? ""));
      if (b.type === "tool_result" && /\bgit\b.*\b(commit|merge|cherry-pick|revert)\b/s.test(uses.get(String(b.tool_use_id)) ?? "")) {
        const stdout = String((rec.toolUseResult as Rec | undefined)?.stdout ?? "");
        for (const m of stdout.matchAll(/^\[(\S+)(?: \([^)]*\))? [0-9a-f]{7,40}\] (.+)$/gm)) {
          out.push({ subject: m[2]!.trim(), time: String(rec.timestamp), branch: m[1]! });
        }
      }
    }
  }
  return out;
}

/**
 * Makes again, in `repo`, the commits a real transcript shows (same subjects, a second before the times it
 * records), so `aiflare import` finds them as it would in the clone they came from.
 */
export function remakeShownCommits(repo: TempRepo, transcript: string): { shown: ShownCommit[]; made: string[] } {
  const shown = commitsShownIn(transcript);
  const made: string[] = [];
  for (const [i, c] of shown.entries()) {
    const when = new Date(Date.parse(c.time) - 1000).toISOString();
    writeFileSync(join(repo.root, `f${i}.txt`), `${i}\n`);
    repo.git("add", "-A");
    Bun.spawnSync(["git", "commit", "-q", "-m", c.subject], { cwd: repo.root, env: { ...repo.env, GIT_COMMITTER_DATE: when, GIT_AUTHOR_DATE: when } });
    made.push(repo.git("rev-parse", "HEAD"));
  }
  return { shown, made };
}

/**
 * `aiflare import` alone, with the timeline and sessions branches gone, gives the entries the hooks wrote for
 * `hashes`: the same agent type, session, group and typed prompts; `imported` entries in all; a second run adds none.
 */
export async function importReproduces(repo: TempRepo, env: Record<string, string>, hashes: string[], imported: number): Promise<void> {
  const { expect } = await import("bun:test");
  const shape = (e: Record<string, any>) => [e.agentType, e.claudeSessionId, e.groupRootId ?? null, records(e.conversationSnippet).filter((l) => l.role === "user")];
  const live = hashes.map((h) => shape(showEntry(repo, h)!));
  repo.git("update-ref", "-d", "refs/heads/aiflare/timeline/v1");
  repo.git("update-ref", "-d", "refs/heads/aiflare/sessions/v1");
  const run = async () => JSON.parse((await runBin(["import", "--json"], { cwd: repo.root, env, timeoutMs: 60_000 })).stdout);
  expect((await run()).imported).toBe(imported);
  expect(hashes.map((h) => shape(showEntry(repo, h)!))).toEqual(live);
  expect((await run()).imported).toBe(0);
}

/** `aiflare import --json <args>` in the repository: its summary, after checking it ran cleanly. */
export async function importJson(r: TempRepo, args: string[]): Promise<Record<string, any>> {
  const { expect } = await import("bun:test");
  const out = await runBin(["import", "--json", ...args], { cwd: r.root, env: r.env });
  expect(out.stderr).toBe("");
  expect(out.code).toBe(0);
  return JSON.parse(out.stdout);
}
