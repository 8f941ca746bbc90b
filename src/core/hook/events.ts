import { rmSync, statSync } from "node:fs";
import { appendToUserFile, appendWhole, writeOwnFile } from "../fsutil.ts";
import { cleanupStaleSessions } from "../session-cleanup.ts";
import { lastAssistantTextInTranscript } from "../transcript.ts";
import type { AgentEvent } from "../../agents/types.ts";
import type { ConversationLine } from "../../util/jsonl.ts";
import type { HookContext, HookHandler } from "./types.ts";

function appendConversation(ctx: HookContext, line: ConversationLine): void {
  appendWhole(ctx.files.prompts, `${JSON.stringify(line)}\n`);
}

/** SessionStart: export the session id to the agent's Bash tool through `$CLAUDE_ENV_FILE`. */
const sessionStart: HookHandler = (ctx) => {
  // Codex has no SessionEnd: its sessions' leftover files are cleared here instead.
  if (ctx.input.agent === "codex") cleanupStaleSessions(ctx.repo.root, "codex");
  const envFile = ctx.env.CLAUDE_ENV_FILE;
  if (!envFile) return undefined;
  // The id matched ^[A-Za-z0-9._-]+$, so it cannot close the single quotes.
  appendToUserFile(envFile, `export CLAUDE_SESSION_ID='${ctx.input.sessionId}'\n`);
  return undefined;
};

/** UserPromptSubmit: record the prompt. */
const userPromptSubmit: HookHandler = (ctx) => {
  const prompt = ctx.input.prompt;
  if (typeof prompt !== "string") {
    ctx.logger.log("warn", "user-prompt-submit payload has no prompt", { session: ctx.input.sessionId });
    return undefined;
  }
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

/** Stop: record the assistant's reply, preferring the payload over the (possibly unflushed) transcript. */
const stop: HookHandler = (ctx) => {
  if (ctx.input.stopHookActive === true) return undefined;
  let text = ctx.input.lastAssistantMessage;
  if (text === undefined) {
    const transcript = readableTranscript(ctx.input.transcriptPath);
    text = transcript ? lastAssistantTextInTranscript(transcript) : undefined;
  }
  if (text === undefined || text.trim() === "") {
    ctx.logger.log("info", "stop: no assistant text found", { session: ctx.input.sessionId });
    return undefined;
  }
  appendConversation(ctx, { role: "assistant", content: text });
  return undefined;
};

/** Tools whose calls can run `git commit`: Claude Code's Bash, Codex's shell tools. */
const SHELL_TOOLS = new Set(["Bash", "shell", "local_shell", "exec_command", "container.exec"]);

/**
 * The question and the user's answer as conversation lines: the answer never goes through UserPromptSubmit,
 * yet it is often the reason for the next commit.
 */
export function questionLines(answers: { question: string; answer: string }[]): ConversationLine[] {
  const one = answers.length === 1;
  return [
    { role: "assistant", content: answers.map((a) => a.question).join("\n") },
    { role: "user", content: one ? answers[0]!.answer : answers.map((a) => `${a.question} → ${a.answer}`).join("\n") },
  ];
}

/** PostToolUse: AskUserQuestion records the answer and leaves a marker; a shell `git commit` is captured. */
const postToolUse: HookHandler = async (ctx) => {
  const tool = ctx.input.toolName;
  if (tool === "AskUserQuestion") {
    if (ctx.input.answers) {
      appendWhole(ctx.files.prompts, questionLines(ctx.input.answers).map((l) => `${JSON.stringify(l)}\n`).join(""));
    }
    writeOwnFile(ctx.files.pendingQuestion, "");
    return undefined;
  }
  if (tool && SHELL_TOOLS.has(tool) && ctx.input.toolCommand) {
    const { onShellToolUse } = await import("../capture/commit-hook.ts");
    return onShellToolUse(ctx);
  }
  return undefined;
};

/** SessionEnd: store the final transcript, then remove the session's live files. */
const sessionEnd: HookHandler = async (ctx) => {
  try {
    const { storeSessionTranscript } = await import("../capture/commit-hook.ts");
    await storeSessionTranscript(ctx);
  } finally {
    removeSessionFiles(ctx);
  }
  return undefined;
};

/** Removes one session's files from `.context-capture/`. */
export function removeSessionFiles(ctx: Pick<HookContext, "files">): void {
  const f = ctx.files;
  for (const path of [f.prompts, f.offset, f.delta, f.pendingQuestion]) rmSync(path, { force: true });
}

/** The handler of each agent event. */
export const HANDLERS: Record<AgentEvent, HookHandler> = {
  "session-start": sessionStart,
  "user-prompt-submit": userPromptSubmit,
  stop,
  "post-tool-use": postToolUse,
  "session-end": sessionEnd,
};
