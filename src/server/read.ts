/** The read API's answers, shaped from stored rows: summaries, cursors, session facts, transcript cuts. */
import { searchWords } from "../core/dashboard/answers.ts";
import { parseTimeSpec } from "../core/history/filters.ts";
import { TAGS } from "../store/entry.ts";
import { conversationLines } from "../util/jsonl.ts";
import type { SessionFacts, StoredEntry, TimelineQuery } from "./storage.ts";

/** A query parameter the read API cannot use; answered with 400 and the message. */
export class BadQuery extends Error {}

export const DEFAULT_PAGE = 50;
export const MAX_PAGE = 200;

/**
 * An entry's Summary: its fields without conversationSnippet, plus groupId (= groupRootId ?? commitHash) and the
 * first user request of its delta.
 */
export function summary(e: StoredEntry): Record<string, unknown> {
  return { ...(JSON.parse(e.summary) as object), groupRootId: e.groupRootId, groupId: e.groupRootId ?? e.commitHash, request: e.request ?? null };
}

/** The whole entry, conversationSnippet included. */
export function fullEntry(e: StoredEntry): Record<string, unknown> {
  const { groupId: _, request: _request, ...rest } = summary(e);
  return { ...rest, conversationSnippet: e.conversation ?? "" };
}

/** The opaque cursor after `e`: its place in the one order (commit time, recorded time, commit hash). */
export function cursorAfter(e: StoredEntry): string {
  return Buffer.from(`${Number(e.sortMs)}:${Number(e.recordedMs)}:${e.commitHash}`).toString("base64url");
}

function readCursor(text: string): TimelineQuery["after"] {
  const m = /^(-?\d+):(-?\d+):([0-9a-f]{40})$/.exec(Buffer.from(text, "base64url").toString());
  if (!m) throw new BadQuery("cursor: not a cursor this server gave out");
  return { sortMs: Number(m[1]), recordedMs: Number(m[2]), commitHash: m[3]! };
}

function timeParam(name: "since" | "until", text: string | null, now: Date): number | undefined {
  if (!text) return undefined;
  const ms = parseTimeSpec(text, now, name);
  if (ms === null) throw new BadQuery(`${name}: use an ISO-8601 date or an age such as 7d`);
  return ms;
}

/** A repository path as the filters take it: no leading ./ or /, no trailing /. */
export function normalPath(p: string): string {
  return p.trim().replace(/^(\.\/)+/, "").replace(/^\/+/, "").replace(/\/+$/, "");
}

/** The timeline's query string → a storage query (one entry more than the page, to know whether another follows). */
export function timelineQuery(params: URLSearchParams, now = new Date()): TimelineQuery {
  const limitText = params.get("limit");
  const limit = limitText === null || limitText === "" ? DEFAULT_PAGE : Number(limitText);
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_PAGE) throw new BadQuery(`limit: a whole number from 1 to ${MAX_PAGE}`);
  const q: TimelineQuery = { limit: limit + 1 };
  const cursor = params.get("cursor");
  if (cursor) q.after = readCursor(cursor);
  const tag = params.get("tag");
  if (tag) {
    const tags = tag.split(",").map((t) => t.trim().toUpperCase()).filter(Boolean);
    const bad = tags.filter((t) => !(TAGS as readonly string[]).includes(t));
    if (bad.length) throw new BadQuery(`tag: unknown ${bad.join(", ")}; use ${TAGS.join(", ")}`);
    q.tags = tags;
  }
  const session = params.get("session")?.trim();
  if (session) q.sessionPrefix = session;
  const file = params.get("file");
  if (file !== null && file.trim() !== "") q.file = normalPath(file);
  const branch = params.get("branch");
  if (branch) q.branch = branch;
  const author = params.get("author")?.trim();
  if (author) q.author = author.slice(0, 200);
  const text = params.get("q");
  if (text) {
    const words = searchWords(text);
    if (words.length) q.words = words;
  }
  q.sinceMs = timeParam("since", params.get("since"), now);
  q.untilMs = timeParam("until", params.get("until"), now);
  if (q.sinceMs !== undefined && q.untilMs !== undefined && q.sinceMs >= q.untilMs) throw new BadQuery("since: not before until");
  return q;
}

/** `sessions` of the timeline answer. */
export function sessionsAnswer(facts: SessionFacts[]): Record<string, unknown> {
  return Object.fromEntries(
    facts.map((f) => [
      f.sessionId,
      {
        firstRequest: f.firstRequest,
        agentType: f.agentType,
        branch: f.branch,
        start: new Date(Number(f.startMs)).toISOString(),
        end: new Date(Number(f.endMs)).toISOString(),
        commits: Number(f.commits),
      },
    ]),
  );
}

/**
 * Where each commit falls in the session transcript: the number of transcript lines up to and including the
 * commit's delta. Found by locating the delta's last line after the previous cut; when the transcript does not hold
 * it (an older or differently redacted transcript), the delta's line count is added instead.
 */
export function transcriptCuts(transcript: string, entries: StoredEntry[]): { commitHash: string; afterLine: number }[] {
  const lines = transcript.split("\n");
  if (lines.at(-1) === "") lines.pop();
  const keyOf = (line: string) => {
    const [c] = conversationLines(line);
    return c ? `${c.role}\0${c.content}` : line;
  };
  const keys = lines.map(keyOf);
  let at = 0;
  return entries.map((e) => {
    const delta = (e.conversation ?? "").split("\n").filter((l) => l.trim() !== "");
    const last = delta.at(-1);
    let found = -1;
    if (last !== undefined) {
      const k = keyOf(last);
      for (let i = Math.max(at, 0); i < keys.length; i++) {
        if (keys[i] === k) {
          found = i;
          break;
        }
      }
    }
    at = found >= 0 ? found + 1 : Math.min(keys.length, at + delta.length);
    return { commitHash: e.commitHash, afterLine: at };
  });
}
