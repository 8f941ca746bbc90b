/** The history views: `history list` (list.ts), `history show` and `why`. Each returns the text to print. */
import { finishQueued } from "../capture/queue.ts";
import { AiflareError, usageError } from "../../errors.ts";

export { historyList, type ViewContext } from "./list.ts";
import { withIndex } from "../../store/index-db.ts";
import { existsSync } from "node:fs";
import { resolve } from "node:path";
import { TIMELINE_REF } from "../../store/refs.ts";
import { gitSync, revParseCommit } from "../../util/git.ts";
import { repoAt, type ViewContext } from "./list.ts";
import { knownEntries, knownLinks, partOfLine } from "./known.ts";
import { blameFile, renderBlame, type BlameCommit } from "./blame.ts";
import {
  conversationOf,
  countEntries,
  countMatching,
  entriesByPrefix,
  entryCommitsForPath,
  getEntries,
  getEntry,
  groupMembers,
  entryBlobs,
  listEntries,
  sessionInfo,
} from "./query.ts";
import { termSafe } from "../../util/terminal.ts";
import { renderShow, renderWhy, type WhyCommit } from "./render.ts";
import { commitInfo, commitsTouching, describeTarget, fileHistory, parseWhyTarget, repoPath, type GitCommit } from "./why.ts";
import { linkedView, narrowToLines } from "./linked.ts";
import { renderLinkedShow, type LinkedView } from "./render-links.ts";

const json = (value: unknown) => `${JSON.stringify(value, null, 2)}\n`;

/** Resolves what the user typed (abbreviated hash, `HEAD~2`, a branch) to a full commit hash. */
function resolveCommit(db: Parameters<typeof entriesByPrefix>[0], ref: string, cwd: string): string {
  const text = ref.trim();
  if (/^[0-9a-f]{4,40}$/i.test(text)) {
    const found = entriesByPrefix(db, text);
    if (found.length === 1) return found[0]!;
    if (found.length > 1) {
      throw new AiflareError(
        "INVALID_ARGUMENT",
        `"${text}" matches several entries (${found.map((h) => h.slice(0, 10)).join(", ")}). Give more characters of the hash.`,
      );
    }
  }
  const hash = revParseCommit(cwd, text);
  if (!hash) {
    const moved = /^[0-9a-f]{4,40}$/i.test(text) ? movedEntry(cwd, text) : null;
    if (moved) throw movedError(text, moved);
    throw new AiflareError("NOT_FOUND", `No commit or entry "${text}". See \`aiflare history list\` for recorded commits.`);
  }
  return hash;
}

/**
 * Where the entry of a rewritten commit (amend, rebase) went: the `Moved: <old> <new>` lines of the timeline
 * branch, followed to the latest hash. `from` may be abbreviated. Null when it never moved.
 */
function movedEntry(cwd: string, from: string): string | null {
  let current = from.toLowerCase();
  let found: string | null = null;
  for (let hops = 0; hops < 20; hops++) {
    const r = gitSync(["log", "--format=%B", "-F", `--grep=Moved: ${current}`, TIMELINE_REF, "--"], { cwd });
    if (r.code !== 0) return found;
    const re = new RegExp(`^Moved: ${current}[0-9a-f]* ([0-9a-f]{40})$`, "m");
    const next = re.exec(r.stdout)?.[1];
    if (!next || next === found) return found;
    found = next;
    current = next;
  }
  return found;
}

function movedError(asked: string, to: string): AiflareError {
  return new AiflareError(
    "NOT_FOUND",
    `Commit ${asked.slice(0, 10)} was rewritten (amend or rebase); its entry moved to ${to.slice(0, 10)}: aiflare history show ${to.slice(0, 10)}`,
  );
}

/** `history show <commit>`: the whole entry and its conversation, or the entry as JSON. */
export async function historyShow(ref: string, opts: { json?: boolean }, ctx: ViewContext): Promise<string> {
  const repo = repoAt(ctx.cwd);
  await finishQueued(repo.commonDir);
  return withIndex(repo.commonDir, async (db) => {
    const hash = resolveCommit(db, ref, ctx.cwd);
    const entry = getEntry(db, hash);
    if (!entry) {
      const moved = movedEntry(ctx.cwd, hash);
      if (moved) throw movedError(hash, moved);
      // a squash or rebase-merge of recorded commits: shown through its parts
      const view = await linkedView(db, repo.commonDir, hash);
      if (view) {
        if (opts.json) return json({ commitHash: hash, entry: null, ...linkedJson(view) });
        return renderLinkedShow(ctx.style, hash, commitInfo(repo.commonDir, hash)?.subject ?? "", view);
      }
      throw new AiflareError(
        "NOT_FOUND",
        `Commit ${hash.slice(0, 10)} has no aiflare entry (it was not made by a recorded agent session).`,
      );
    }
    if (opts.json) return json(entry);
    const root = entry.groupRootId ?? entry.commitHash;
    const group = groupMembers(db, root);
    const conversation = conversationOf(db, hash);
    // The request this commit answers: the first prompt of its group's root, else the session's first.
    const rootConversation = root === hash ? conversation : conversationOf(db, root);
    const request =
      rootConversation.find((l) => l.role === "user")?.content ??
      sessionInfo(db, [entry.claudeSessionId]).get(entry.claudeSessionId)?.firstRequest ??
      null;
    return renderShow(entry, { group, conversation, firstRequest: request }, ctx.style);
  });
}

/** `why <file> --blame`: every line of the file with its commit and, where an agent wrote it, the entry. */
export async function whyBlame(spec: string, opts: { json?: boolean }, ctx: ViewContext): Promise<string> {
  const repo = repoAt(ctx.cwd);
  await finishQueued(repo.commonDir);
  const target = parseWhyTarget(spec, ctx.cwd);
  if (target.start !== undefined) throw usageError("--blame shows the whole file: name the file without a line range.");
  const { lines, commits } = await blameFile(ctx.cwd, target.file);
  return withIndex(repo.commonDir, async (db) => {
    const entries = await knownEntries(db, repo, [...commits.keys()].filter((h) => !/^0+$/.test(h)));
    const full = new Map<string, BlameCommit>();
    for (const [h, c] of commits) full.set(h, { ...c, ...(entries.get(h) ?? { entry: null }) });
    // a squash's lines go to the part that wrote each of them
    const linked = await knownLinks(db, repo, [...commits.keys()].filter((h) => !/^0+$/.test(h) && !entries.has(h)));
    if (linked.size) {
      const text = lines.map((l) => l.text);
      const path = repoPath(target, ctx.cwd, repo.root);
      for (const l of lines) {
        const view = linked.get(l.commitHash);
        const part = view ? partOfLine(view, path, text, l.line) : null;
        if (!part) continue;
        l.via = part.commitHash;
        if (!full.has(part.commitHash)) full.set(part.commitHash, { commitHash: part.commitHash, subject: part.title, author: part.author ?? "", dateMs: Date.parse(part.committedAt ?? part.capturedAt), entry: part, team: !getEntries(db, [part.commitHash]).has(part.commitHash) });
      }
    }
    if (opts.json) {
      return json({
        file: target.file,
        lines,
        commits: Object.fromEntries(
          [...full].map(([h, c]) => [h, { subject: c.subject, author: c.author, date: c.dateMs === null ? null : new Date(c.dateMs).toISOString(), entry: c.entry, ...(c.team ? { from: "team" } : {}) }]),
        ),
      });
    }
    return renderBlame(target.file, lines, full, ctx.style);
  });
}

/** The JSON form of a linked commit: its link, its parts' entries and, for a line range, the parts that wrote those lines. */
function linkedJson(view: LinkedView) {
  return {
    link: view.link,
    parts: view.parts,
    ...(view.forLines ? { partsForLines: view.forLines.map((e) => e.commitHash) } : {}),
  };
}

/** `why <target>`: the commits behind a file or lines, newest first, with their entries. */
export async function why(spec: string, opts: { limit?: string | number; json?: boolean }, ctx: ViewContext): Promise<string> {
  const repo = repoAt(ctx.cwd);
  await finishQueued(repo.commonDir);
  const limit = opts.limit === undefined || opts.limit === "" ? 5 : Number(opts.limit);
  if (!Number.isInteger(limit) || limit < 0) {
    throw usageError(`--limit must be a whole number (0 for all), not "${opts.limit}".`);
  }
  const target = parseWhyTarget(spec, ctx.cwd);
  return withIndex(repo.commonDir, async (db) => {
    let commits: GitCommit[];
    let complete = true;
    if (target.start !== undefined) {
      // line ranges: only git knows
      commits = await commitsTouching(target, ctx.cwd);
    } else {
      const recorded = entryCommitsForPath(db, repoPath(target, ctx.cwd, repo.root));
      ({ commits, complete } = await fileHistory(target, { cwd: ctx.cwd, commonDir: repo.commonDir }, recorded, limit));
    }
    const shown = limit === 0 ? commits : commits.slice(0, limit);
    const entries = await knownEntries(db, repo, shown.map((c) => c.commitHash));
    const linked = await knownLinks(db, repo, shown.filter((c) => !entries.has(c.commitHash)).map((c) => c.commitHash));
    const path = repoPath(target, ctx.cwd, repo.root);
    const viaFor = (hash: string): LinkedView | undefined => {
      const view = linked.get(hash);
      if (!view || target.start === undefined) return view;
      return narrowToLines(view, path, resolve(ctx.cwd, target.file), target.start, target.end ?? target.start);
    };
    const list: WhyCommit[] = shown.map((c) => ({ ...c, ...(entries.get(c.commitHash) ?? { entry: null }), via: viaFor(c.commitHash) }));
    // a path that names nothing is an error in every form of the answer (text, --json, the MCP tool)
    if (commits.length === 0 && !existsSync(resolve(ctx.cwd, target.file))) {
      throw new AiflareError("NOT_FOUND", `${target.file}: no such file, here or in git's history. Check the path (it is relative to ${ctx.cwd}).`);
    }
    if (opts.json) {
      return json({
        file: target.file,
        lines: target.start === undefined ? null : { start: target.start, end: target.end },
        total: commits.length,
        complete,
        commits: list.map((c) => ({
          commitHash: c.commitHash,
          subject: c.subject,
          author: c.author,
          date: new Date(c.dateMs).toISOString(),
          entry: c.entry,
          ...(c.team ? { from: "team" } : {}),
          ...(c.via ? linkedJson(c.via) : {}),
        })),
      });
    }
    if (commits.length === 0) return termSafe(`No commit touched ${describeTarget(target)}.\n`);
    return renderWhy(describeTarget(target), list, complete ? commits.length : null, ctx.style);
  });
}
