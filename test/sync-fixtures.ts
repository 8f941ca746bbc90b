/** Test data for sync: entries and sessions written with real git plumbing, and a real local backend. */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Entry } from "../src/store/entry.ts";
import { SESSIONS_REF, TIMELINE_REF, entryPath, segmentPath } from "../src/store/refs.ts";

type Git = (args: string[], opts?: { input?: string; env?: Record<string, string> }) => string;

function gitRunner(root: string, env: Record<string, string>): Git {
  return (args, opts = {}) => {
    const r = Bun.spawnSync(["git", ...args], {
      cwd: root,
      env: { ...env, ...opts.env },
      stdin: opts.input === undefined ? "ignore" : Buffer.from(opts.input),
    });
    if (r.exitCode !== 0) throw new Error(`git ${args.join(" ")} failed: ${r.stderr.toString()}`);
    return r.stdout.toString().trim();
  };
}

/** Adds files to an orphan branch with hash-object, a scratch index, write-tree, commit-tree and update-ref. */
export function writeToBranch(
  repo: { root: string; env: Record<string, string> },
  ref: string,
  files: Record<string, string>,
  message = "aiflare: update",
): string {
  const git = gitRunner(repo.root, repo.env);
  const scratch = mkdtempSync(join(tmpdir(), "aiflare-fixture-"));
  try {
    const indexEnv = { GIT_INDEX_FILE: join(scratch, "index") };
    const parent = Bun.spawnSync(["git", "rev-parse", "--verify", "--quiet", ref], { cwd: repo.root, env: repo.env }).stdout.toString().trim();
    git(parent ? ["read-tree", parent] : ["read-tree", "--empty"], { env: indexEnv });
    const paths = Object.keys(files);
    const blobFiles = paths.map((_, i) => join(scratch, `b${i}`));
    paths.forEach((p, i) => writeFileSync(blobFiles[i]!, files[p]!));
    const oids = paths.length ? git(["hash-object", "-w", "--stdin-paths"], { input: `${blobFiles.join("\n")}\n` }).split("\n") : [];
    const info = paths.map((p, i) => `100644 ${oids[i]}\t${p}`).join("\n");
    if (paths.length) git(["update-index", "--add", "--index-info"], { input: `${info}\n`, env: indexEnv });
    const tree = git(["write-tree"], { env: indexEnv });
    const commit = git(["commit-tree", tree, ...(parent ? ["-p", parent] : []), "-m", message]);
    git(["update-ref", ref, commit, ...(parent ? [parent] : [])]);
    return commit;
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

/** A complete entry for `commitHash`; fields can be overridden. */
export function makeEntry(commitHash: string, over: Partial<Entry> = {}): Entry {
  return {
    commitHash,
    title: `Work on ${commitHash.slice(0, 7)}`,
    intent: "Problem: slow. Solution: cache. Effect: fast.",
    alternatives: "",
    diffSummary: "- src/a.ts: cache added",
    tag: "FEATURE",
    changedFiles: ["src/a.ts"],
    agentType: "CLAUDE_CODE",
    claudeSessionId: "session-1",
    branch: "main",
    conversationSnippet: '{"role":"user","content":"make it fast"}\n',
    continuation: false,
    groupRootId: null,
    capturedAt: "2026-01-01T00:00:00.000Z",
    ...over,
  };
}

/** Stores entries on the timeline branch in the SPEC §4 layout. */
export function writeEntries(repo: { root: string; env: Record<string, string> }, entries: Entry[]): string {
  return writeToBranch(
    repo,
    TIMELINE_REF,
    Object.fromEntries(entries.map((e) => [entryPath(e.commitHash), `${JSON.stringify(e, null, 2)}\n`])),
    `aiflare: ${entries.length} entries`,
  );
}

/** Stores session transcripts on the sessions branch. */
export function writeSessions(repo: { root: string; env: Record<string, string> }, sessions: Record<string, string>): string {
  return writeToBranch(
    repo,
    SESSIONS_REF,
    Object.fromEntries(Object.entries(sessions).map(([id, text]) => [segmentPath(id, 1), text])),
    "aiflare: sessions",
  );
}

export interface Received {
  method: string;
  path: string;
  key: string | null;
  body: any;
}

export interface Backend {
  url: string;
  port: number;
  received: Received[];
  /** entries received in accepted batches */
  captures(): any[];
  sessions(): { claudeSessionId: string; content: string }[];
  /** replaces the answer for the next requests */
  respond(fn: (req: Received, n: number) => Response | Promise<Response>): void;
  stop(): void;
}

/** A real HTTP backend on 127.0.0.1 (port 0) that records every request and answers 200 unless told otherwise. */
export function startBackend(): Backend {
  const received: Received[] = [];
  const accepted: Received[] = [];
  let answer: (req: Received, n: number) => Response | Promise<Response> = () => Response.json({ ok: true });
  let n = 0;
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    async fetch(req) {
      const text = await req.text();
      let body: unknown = text;
      try {
        body = JSON.parse(text);
      } catch {
        // keep the text
      }
      const rec: Received = { method: req.method, path: new URL(req.url).pathname, key: req.headers.get("x-api-key"), body };
      received.push(rec);
      const res = await answer(rec, n++);
      if (res.status >= 200 && res.status < 300) accepted.push(rec);
      return res;
    },
  });
  return {
    url: `http://127.0.0.1:${server.port}`,
    port: server.port!,
    received,
    captures: () => accepted.filter((r) => r.path === "/api/v1/captures/batch").flatMap((r) => r.body.captures),
    sessions: () => accepted.filter((r) => r.path === "/api/v1/work-sessions/prompt").map((r) => r.body),
    respond(fn) {
      answer = fn;
    },
    stop() {
      server.stop(true);
    },
  };
}

/** Writes aiflare.yml at the repository root. */
export function writeConfig(root: string, endpoint: string, key: string): void {
  mkdirSync(root, { recursive: true });
  writeFileSync(join(root, "aiflare.yml"), `api_key: ${JSON.stringify(key)}\nendpoint: ${JSON.stringify(endpoint)}\n`);
}
