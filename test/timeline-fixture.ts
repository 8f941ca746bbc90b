/**
 * Builds aiflare timelines with plain git plumbing (`git fast-import`), in the layout of SPEC §4, so the
 * index and history tests do not depend on the writer's code.
 */
import { entryPath, SESSIONS_REF, segmentPath, TIMELINE_REF } from "../src/store/refs.ts";
import type { Entry } from "../src/store/entry.ts";

let clock = 1_800_000_000;

/** A complete entry with sensible defaults; `overrides` wins. */
export function makeEntry(overrides: Partial<Entry> & { commitHash: string }): Entry {
  return {
    title: "Some work",
    intent: "Problem → Solution → Effect",
    alternatives: "",
    diffSummary: "- file.txt: changed",
    tag: "FEATURE",
    changedFiles: ["file.txt"],
    agentType: "CLAUDE_CODE",
    claudeSessionId: "session-1",
    branch: "main",
    conversationSnippet: "",
    continuation: false,
    groupRootId: null,
    capturedAt: "2026-11-29T10:00:00.000Z",
    ...overrides,
  };
}

/** JSONL conversation text from `[role, content]` pairs. */
export function convo(...lines: [role: "user" | "assistant", content: string][]): string {
  return lines.map(([role, content]) => `${JSON.stringify({ role, content })}\n`).join("");
}

function data(text: string | Uint8Array): string {
  const bytes = typeof text === "string" ? Buffer.from(text) : text;
  return `data ${bytes.length}\n${Buffer.from(bytes).toString("latin1")}\n`;
}

export interface TimelineChange {
  /** entries to add or replace */
  entries?: Array<Entry | { path: string; raw: string }>;
  /** commit hashes whose entries are removed */
  remove?: string[];
  /** session transcripts to add or replace (id → JSONL) */
  sessions?: Record<string, string>;
  /** any other files on the sessions branch (path → content), e.g. first-layout transcripts or later segments */
  sessionFiles?: Record<string, string>;
}

/**
 * Appends one commit to each branch touched by `change` (creating the branches when missing).
 * Runs in `cwd` (any directory of the repository).
 */
export function writeTimeline(cwd: string, env: Record<string, string>, change: TimelineChange): void {
  let stream = "";
  const head = (ref: string) => {
    const r = Bun.spawnSync(["git", "rev-parse", "--verify", "-q", ref], { cwd, env });
    return r.exitCode === 0 ? r.stdout.toString().trim() : null;
  };
  const commit = (ref: string, body: string) => {
    const parent = head(ref);
    clock += 1;
    stream += `commit ${ref}\ncommitter aiflare <aiflare@localhost> ${clock} +0000\n${data("aiflare update")}`;
    if (parent) stream += `from ${parent}\n`;
    stream += body;
  };
  if (change.entries?.length || change.remove?.length) {
    let body = "";
    for (const e of change.entries ?? []) {
      const raw = e as { path?: unknown; raw?: unknown; commitHash?: unknown };
      if (typeof raw.raw === "string") body += `M 100644 inline ${String(raw.path)}\n${data(raw.raw)}`;
      else body += `M 100644 inline ${entryPath(String(raw.commitHash))}\n${data(Buffer.from(JSON.stringify(e)))}`;
    }
    for (const h of change.remove ?? []) body += `D ${entryPath(h)}\n`;
    commit(TIMELINE_REF, body);
  }
  const files = { ...Object.fromEntries(Object.entries(change.sessions ?? {}).map(([id, text]) => [segmentPath(id, 1), text])), ...change.sessionFiles };
  if (Object.keys(files).length) {
    let body = "";
    for (const [path, text] of Object.entries(files)) body += `M 100644 inline ${path}\n${data(Buffer.from(text))}`;
    commit(SESSIONS_REF, body);
  }
  if (!stream) return;
  const r = Bun.spawnSync(["git", "fast-import", "--quiet", "--force"], {
    cwd,
    env,
    stdin: Buffer.from(`${stream}done\n`, "latin1"),
    stderr: "pipe",
  });
  if (r.exitCode !== 0) throw new Error(`git fast-import failed: ${r.stderr.toString()}`);
}

/** A deterministic fake 40-hex hash for entry `n` (for entries whose commits need not exist). */
export function fakeHash(n: number): string {
  return new Bun.CryptoHasher("sha1").update(`entry-${n}`).digest("hex");
}

/**
 * Two commits of `repo` with entries: "Add the upload client" (session old-1, with its why) and "Wire uploads"
 * (session old-2, still waiting for its summary). Returns their hashes.
 */
export function uploadHistory(repo: { root: string; env: Record<string, string>; commit(message: string): string }): { a: string; b: string } {
  const a = repo.commit("one");
  const b = repo.commit("two");
  writeTimeline(repo.root, repo.env, {
    entries: [
      makeEntry({ commitHash: a, title: "Add the upload client", intent: "Uploads needed a client.", capturedAt: "2026-11-20T10:00:00Z", claudeSessionId: "old-1" }),
      makeEntry({ commitHash: b, title: "Wire uploads", summaryStatus: "pending", capturedAt: "2026-11-21T10:00:00Z", claudeSessionId: "old-2" }),
    ],
  });
  return { a, b };
}
