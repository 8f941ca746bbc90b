import { statSync } from "node:fs";
import { appendToUserFile, writeOwnFile } from "../fsutil.ts";
import { shellQuote } from "../install/binary.ts";
import { cleanupStaleSessions, staleCleanupDue } from "../session-cleanup.ts";
import { savedStartAnswer } from "../recall/start-cache.ts";
import { mayCommit, reflogStampOf, runsWhereItStarts } from "../capture/may-commit.ts";
import { queuedJobs, queueSessionEnd, startWorker } from "../capture/queue.ts";
import { isEditTool } from "../recall/tools.ts";
import { appendLogLines, hasUnstoredLines, readLogState, readQuestionMark, reflogUnchanged, rememberSession, updateLogState, withSessionLock } from "../session-log.ts";
import { isValidSessionId, sessionFiles } from "../session.ts";
import { LATE_REPLIES } from "../../agents/index.ts";
import type { AgentEvent, HookInput, ReplyDue } from "../../agents/types.ts";
import type { ConversationLine } from "../../util/jsonl.ts";
import type { HookContext, HookHandler, HookOutput } from "./types.ts";

/** Appends a line to the live conversation with the time it was said: the hook runs at that moment. */
function appendConversation(ctx: HookContext, line: ConversationLine): void {
  appendLogLines(ctx.files.prompts, [{ ...line, at: new Date().toISOString() }]);
}

/**
 * SessionStart: export the session id to the agent's Bash tool through `$CLAUDE_ENV_FILE`, and recall's context. A
 * resumed session (same id) finds its live files where SessionEnd left them.
 */
const sessionStart: HookHandler = async (ctx) => {
  // Sessions that never ended cleanly (Codex has no SessionEnd; a crash skips it) are cleared here after a week
  // (looked for at most once an hour); conversation of theirs not stored yet is stored first, and stays live if that fails.
  const unstored: string[] = [];
  const keep = (id: string) => {
    // this very session, resumed after a long pause, keeps its files
    if (id === ctx.input.sessionId) return true;
    const unsaved = isValidSessionId(id) && hasUnstoredLines(sessionFiles(ctx.repo.root, ctx.input.agent, id));
    if (unsaved) unstored.push(id);
    return unsaved;
  };
  if (staleCleanupDue(ctx.repo.root, ctx.input.agent)) cleanupStaleSessions(ctx.repo.root, ctx.input.agent, Date.now(), undefined, keep);
  if (unstored.length) {
    const { storeStaleSessions } = await import("../capture/commit-hook.ts");
    await storeStaleSessions(ctx, unstored);
  }
  // work queued by hooks whose worker never finished (a crash, a reboot) is done now, out of the agent's way
  if (queuedJobs(ctx.repo.commonDir).length) await startWorker(ctx.repo.root, ctx.repo.commonDir, ctx.env, ctx.logger);
  if (ctx.input.model) rememberSession(ctx.files, { model: ctx.input.model });
  const envFile = ctx.env.CLAUDE_ENV_FILE;
  // The id matched ^[A-Za-z0-9._-]+$, so it cannot close the single quotes.
  if (envFile) appendToUserFile(envFile, `export CLAUDE_SESSION_ID='${ctx.input.sessionId}'\n`);
  // the answer saved by an earlier start on the same state, else computed by the recall code (loaded only then)
  const saved = savedStartAnswer(ctx);
  return saved ? saved.output : (await import("../recall/session-start.ts")).sessionStartRecall(ctx);
};

/**
 * True for aiflare's own Stop reminder (pendingReminder) coming back as a prompt: an agent that continues after a
 * blocked Stop by sending the reason as the next request (Gemini CLI's AfterAgent, GitHub Copilot CLI) fires its prompt hook with it.
 */
export function isOwnReminder(prompt: string): boolean {
  return prompt.startsWith(REMINDER_START) && prompt.includes(" of this session still ");
}

/** UserPromptSubmit: record the prompt (not aiflare's own reminder: the user did not write it). */
const userPromptSubmit: HookHandler = (ctx) => {
  const prompt = ctx.input.prompt;
  const reminder = typeof prompt === "string" && isOwnReminder(prompt);
  backfillReply(ctx, !reminder);
  if (typeof prompt !== "string") {
    ctx.logger.log("warn", "user-prompt-submit payload has no prompt", { session: ctx.input.sessionId });
    return undefined;
  }
  if (reminder) return undefined;
  appendConversation(ctx, { role: "user", content: prompt });
  return undefined;
};

/** A transcript path from a payload is only read when it names a regular `.jsonl` file. */
function readableTranscript(path: string | undefined): string | undefined {
  if (!path || !path.endsWith(".jsonl")) return undefined;
  try {
    return statSync(path).isFile() ? path : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Stop: record the assistant's reply, preferring the payload over the (possibly unflushed) transcript. A Stop that
 * follows a continuation (`stop_hook_active`) records the reply of that continuation and never blocks again.
 */
const stop: HookHandler = async (ctx) => {
  backfillReply(ctx, false);
  // not written yet where the agent keeps it: read at the session's next hooks, so this Stop does not wait for it
  const due = ctx.input.replyDue;
  if (due) updateLogState(ctx.files, (s) => ({ replyDue: [...(s.replyDue ?? []), due].slice(-20) }));
  else if (!ctx.input.replyRecorded) await recordReply(ctx);
  // after a continuation (ours or another hook's) the reply is recorded like any other, and nothing blocks again
  return ctx.input.stopHookActive === true ? unansweredReminder(ctx) : pendingReminder(ctx);
};

/** How long sessionEnd, the session's last hook, waits for replies the agent has not written yet. */
const LAST_WAIT_MS = 1000;

/**
 * The replies earlier Stops of the session could not read yet (Copilot CLI writes its events file behind the hook
 * call, at times seconds later), read now that the agent moved on, before this hook's own lines: each keeps its place
 * in the conversation. A hook that records no user line (`final` false: a Stop, the reminder handed back as a prompt)
 * leaves those still unwritten due for the next hook; the others take what is there, sessionEnd after waiting up to
 * LAST_WAIT_MS.
 */
function backfillReply(ctx: HookContext, final: boolean, waitMs = 0): void {
  const read = LATE_REPLIES[ctx.input.agent];
  if (!read) return;
  const due = readLogState(ctx.files).replyDue;
  if (!due) return;
  let left: ReplyDue[] = [];
  for (let i = 0; i < due.length; i++) {
    let found = read(due[i]!);
    for (let waited = 0; !found.ready && waited < waitMs; waited += 50) {
      Bun.sleepSync(50);
      found = read(due[i]!);
    }
    if (!found.ready && !final) {
      left = due.slice(i);
      break;
    }
    if (found.ready && found.reply !== undefined && found.reply.trim() !== "") appendConversation(ctx, { role: "assistant", content: found.reply });
    else ctx.logger.log("info", "stop: a reply due was not found", { session: ctx.input.sessionId, ready: found.ready });
  }
  updateLogState(ctx.files, () => ({ replyDue: left.length ? left : undefined }));
}

/** The reply of a turn, from the payload or else the transcript's last assistant text. */
async function recordReply(ctx: HookContext): Promise<void> {
  let text = ctx.input.lastAssistantMessage;
  if (text === undefined) {
    const transcript = readableTranscript(ctx.input.transcriptPath);
    if (transcript) {
      // the transcript reader is loaded only for payloads without the reply: every module adds to each turn's wait
      const { lastAssistantTextInTranscript } = await import("../transcript.ts");
      text = lastAssistantTextInTranscript(transcript);
    }
  }
  if (text === undefined || text.trim() === "") {
    ctx.logger.log("info", "stop: no assistant text found", { session: ctx.input.sessionId });
  } else {
    appendConversation(ctx, { role: "assistant", content: text });
  }
}

/**
 * The reply of an agent that sends it in an event of its own (Cursor's afterAgentResponse) before the end of the
 * turn; that agent's Stop then only reminds.
 */
const agentResponse: HookHandler = async (ctx) => {
  await recordReply(ctx);
  return undefined;
};

const commitsWord = (n: number) => (n === 1 ? "commit" : "commits");

/** How the Stop reminder begins: `aiflare: commit <hash>` or `aiflare: commits <hash>, …`. */
const REMINDER_START = "aiflare: commit";

/**
 * At the end of a turn, commits of this session whose entry still waits for the agent's summary are handed back to
 * the agent: a Stop answer `{"decision":"block"}` makes it continue once with the reason as its next instruction.
 * Each commit is asked about once; `aiflare capture` takes it off the list.
 */
function pendingReminder(ctx: HookContext): HookOutput {
  // Claude Code and Codex both read a Stop answer `{"decision":"block","reason"}` as the next instruction
  const state = readLogState(ctx.files);
  const due: string[] = [];
  for (const h of state.pending) if (!state.reminded.includes(h)) due.push(h);
  if (due.length === 0) return undefined;
  updateLogState(ctx.files, (s) => ({ reminded: [...new Set([...s.reminded, ...due])].slice(-50) }));
  const bin = shellQuote(process.execPath);
  return {
    decision: "block",
    reason:
      `${REMINDER_START}${due.length === 1 ? "" : "s"} ${due.join(", ")} of this session still ${due.length === 1 ? "has" : "have"} no summary. ` +
      `Before stopping, run the context-capture skill: write why the change was made (title, intent, alternatives, ` +
      `diff summary, tag) and save it with \`${bin} capture --commit-hash ${due[0]} …\`` +
      (due.length > 1 ? " (once per hash)." : "."),
  };
}

/**
 * The Stop after the continuation: the commits the agent was asked about and still did not summarise are named to
 * the user (a message, never a block), once each.
 */
function unansweredReminder(ctx: HookContext): HookOutput {
  const state = readLogState(ctx.files);
  const left: string[] = [];
  for (const h of state.pending) if (state.reminded.includes(h) && !state.told.includes(h)) left.push(h);
  if (left.length === 0) return undefined;
  updateLogState(ctx.files, (s) => ({ told: [...new Set([...s.told, ...left])].slice(-50) }));
  return {
    systemMessage:
      `aiflare: the agent was asked to summarise ${commitsWord(left.length)} ${left.join(", ")} and did not. ` +
      `Ask it to run the context-capture skill, or run \`aiflare capture --commit-hash ${left[0]}\` yourself.`,
  };
}

/** Tools whose calls can run `git commit`: Claude Code's Bash, Codex's shell tools, Cursor's Shell, Copilot CLI's bash. */
const SHELL_TOOLS = new Set(["Bash", "shell", "local_shell", "exec_command", "container.exec", "Shell", "bash"]);

/**
 * Each question and the user's answer to it as conversation lines marked as such: the answer never goes through
 * UserPromptSubmit, yet it is often the reason for the next commit, and readers show what was asked and answered
 * instead of guessing from the order of turns.
 */
export function questionLines(answers: { question: string; answer: string }[], at?: string): ConversationLine[] {
  const out: ConversationLine[] = [];
  const time = at === undefined ? {} : { at };
  for (const a of answers) {
    out.push({ role: "assistant", kind: "question", content: a.question, ...time }, { role: "user", kind: "answer", content: a.answer, ...time });
  }
  return out;
}

/**
 * True when a PostToolUse holds nothing for aiflare: no question answered, no shell command that can hold a commit
 * (most tool calls). The runner is then done before it looks for the repository or the session's files.
 */
function postToolUseIdle(input: HookInput): boolean {
  if (input.toolName === "AskUserQuestion") return false;
  return !(input.toolName && SHELL_TOOLS.has(input.toolName) && input.toolCommand && mayCommit(input.toolCommand));
}

/**
 * The events whose payload alone can say there is nothing to do. The runner asks before anything else and calls the
 * event's handler only when this says no: the handlers do not ask again.
 */
export const IDLE: Partial<Record<AgentEvent, (input: HookInput) => boolean>> = {
  // recall speaks before an edit only
  "pre-tool-use": (input) => !isEditTool(input.toolName),
  "post-tool-use": postToolUseIdle,
  "post-tool-use-failure": postToolUseIdle,
};

/**
 * This repository's HEAD reflog stamp when every git of the command runs where the line starts (null: it keeps no
 * reflog); undefined when the command may run git elsewhere, which the commit hook then looks at itself.
 */
function stampHere(ctx: HookContext): string | null | undefined {
  return runsWhereItStarts(ctx.input.toolCommand!) ? reflogStampOf([ctx.repo.gitDir]) : undefined;
}

/**
 * PostToolUse: AskUserQuestion records the answer and leaves a marker holding the log's size at the question (what
 * the user typed before it is a new request, what came after is the answer); a shell command that can hold a commit
 * (what IDLE lets through otherwise) is captured.
 */
const postToolUse: HookHandler = async (ctx) => {
  const tool = ctx.input.toolName;
  if (tool === "AskUserQuestion") {
    // the marker holds a position in the log: written under the lock that the log's compaction takes
    withSessionLock(ctx.files, () => {
      const at = appendLogLines(ctx.files.prompts, ctx.input.answers ? questionLines(ctx.input.answers, new Date().toISOString()) : []);
      // an earlier unanswered question keeps its place: the first question of the delta decides
      if (readQuestionMark(ctx.files) === null) writeOwnFile(ctx.files.pendingQuestion, `${at}\n`);
    });
    return undefined;
  }
  // a commit that made nothing here (most often: nothing to commit) left the reflog as the session's last look found
  // it: told without the command's parser; the commit hook takes the stamp rather than looking again
  const here = stampHere(ctx);
  if (reflogUnchanged(ctx.files, here)) return undefined;
  const { onShellToolUse } = await import("../capture/commit-hook.ts");
  return onShellToolUse(ctx, here);
};

/**
 * SessionEnd: what must happen at this moment (late replies, the /clear handoff), then the rest of the transcript is
 * queued for the capture worker, which stores it and shrinks the live files to what no entry holds yet. A failure
 * leaves every file in place (the runner logs it) for the next hook or a resumed session.
 */
const sessionEnd: HookHandler = async (ctx) => {
  backfillReply(ctx, true, LAST_WAIT_MS);
  if (ctx.input.reason === "clear") (await import("../recall/session-start.ts")).saveHandoff(ctx);
  await queueSessionEnd(ctx);
  return undefined;
};

/** The handler of each agent event. */
export const HANDLERS: Record<AgentEvent, HookHandler> = {
  "session-start": sessionStart,
  "user-prompt-submit": userPromptSubmit,
  stop,
  // an edit's (IDLE lets no other tool through)
  "pre-tool-use": async (ctx) => (await import("../recall/hooks.ts")).preToolUse(ctx),
  "post-tool-use": postToolUse,
  // a command that committed and then failed (`git commit … && npm test`) arrives here
  "post-tool-use-failure": postToolUse,
  "session-end": sessionEnd,
  "agent-response": agentResponse,
};
