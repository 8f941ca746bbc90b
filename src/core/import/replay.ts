import type { ConversationLine } from "../../util/jsonl.ts";
import { isOwnReminder, questionLines } from "../hook/events.ts";
import { commitsOfCall, type CommitCatalog, type KnownCommit } from "./commits.ts";
import type { PastEvent } from "./events.ts";

/*
 * Replays a past session as the live hooks would have recorded it: UserPromptSubmit appends each typed prompt,
 * Stop appends the turn's last reply when the turn ends, AskUserQuestion appends the question and the answer,
 * and each commit cuts the lines recorded since the previous one (the delta). Grouping follows SPEC §5.
 */

type Kind = "prompt" | "reply" | "question" | "answer";

/** One commit of the session with the conversation cut for it. */
export interface ReplayedCommit {
  commit: KnownCommit;
  /** JSONL text of the delta ("" for the later commits of one command) */
  delta: string;
  /** the delta holds a new request (a prompt typed before any question of this delta) */
  newRequest: boolean;
  /** an AskUserQuestion was answered in this delta */
  continuation: boolean;
  /** made by `git commit --amend`: it replaces the session's previous commit */
  amend: boolean;
  branch?: string;
  /** when the session recorded the commit (ms): the call's end, a millisecond apart for each commit of one call */
  at: number;
}

export interface Replay {
  /** the whole conversation as JSONL lines */
  transcript: string;
  lines: number;
  commits: ReplayedCommit[];
  /** committing commands whose commit is not in this repository */
  unmatched: { command: string; time: number }[];
}

const jsonl = (lines: ConversationLine[]) => lines.map((l) => `${JSON.stringify(l)}\n`).join("");

/**
 * Replays one session's events against the repository's commits. `claimed` is shared across sessions. A shell call
 * without times (Cursor's transcripts have none) is matched between the session's previous commit and `until` (ms),
 * by the message its command names.
 */
export function replaySession(events: PastEvent[], catalog: CommitCatalog, claimed: Set<string>, until = Number.NaN): Replay {
  const lines: ConversationLine[] = [];
  const kinds: Kind[] = [];
  let offset = 0;
  let reply: { text: string; time: number } | null = null;
  const commits: ReplayedCommit[] = [];
  const unmatched: Replay["unmatched"] = [];
  const push = (line: ConversationLine, kind: Kind) => {
    lines.push(line);
    kinds.push(kind);
  };
  /** The line's time from the transcript's, when it has one. */
  const at = (ms: number): { at?: string } => (Number.isFinite(ms) ? { at: new Date(ms).toISOString() } : {});
  const endTurn = () => {
    if (reply !== null) push({ role: "assistant", content: reply.text, ...at(reply.time) }, "reply");
    reply = null;
  };

  let lastCommitMs = 0;
  for (const ev of events) {
    if (ev.kind === "prompt") {
      // aiflare's Stop reminder, handed back as the next prompt by some agents: the live hook skips it too
      if (isOwnReminder(ev.text)) continue;
      endTurn();
      push({ role: "user", content: ev.text, ...at(ev.time) }, "prompt");
    } else if (ev.kind === "assistant") {
      reply = { text: ev.text, time: ev.time };
    } else if (ev.kind === "question") {
      for (const line of questionLines(ev.answers, at(ev.time).at)) push(line, line.kind === "answer" ? "answer" : "question");
    } else {
      const timed = Number.isFinite(ev.start) && Number.isFinite(ev.end);
      const call = timed || !Number.isFinite(until) ? ev : { ...ev, start: lastCommitMs, end: until };
      const { commits: made, committing, amend } = commitsOfCall(call, catalog, claimed);
      if (!committing) continue;
      if (made.length === 0) {
        if (!ev.failed) unmatched.push({ command: ev.command.slice(0, 200), time: ev.end });
        continue;
      }
      const cut = kinds.slice(offset);
      const firstQuestion = cut.indexOf("question");
      const before = firstQuestion < 0 ? cut : cut.slice(0, firstQuestion);
      const delta = jsonl(lines.slice(offset));
      offset = lines.length;
      lastCommitMs = Math.max(lastCommitMs, made.at(-1)!.time * 1000);
      made.forEach((commit, i) => {
        claimed.add(commit.hash);
        commits.push({
          commit,
          delta: i === 0 ? delta : "",
          newRequest: i === 0 && before.includes("prompt"),
          continuation: i === 0 && firstQuestion >= 0,
          amend: i === 0 && amend,
          branch: ev.branch,
          at: ev.end + i,
        });
      });
    }
  }
  endTurn();
  return { transcript: jsonl(lines), lines: lines.length, commits, unmatched };
}
