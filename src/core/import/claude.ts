import { clipOutput, jsonlRecords, noteTime, timeOf, type OnLongLine, type PastEvent, type PastSessionMeta } from "./events.ts";

/*
 * Claude Code transcripts (`~/.claude/projects/<encoded cwd>/<session>.jsonl`): `user` lines hold typed prompts
 * (a string or text blocks) or tool results; `assistant` lines hold text, thinking and tool_use blocks. Subagent
 * lines (`isSidechain`), meta lines, compaction summaries and synthetic messages are not the conversation.
 */

type Rec = Record<string, unknown>;
type Block = { type?: unknown; text?: unknown; id?: unknown; name?: unknown; input?: unknown; tool_use_id?: unknown; content?: unknown; is_error?: unknown };

function blocks(content: unknown): Block[] {
  return Array.isArray(content) ? (content.filter((b) => b && typeof b === "object") as Block[]) : [];
}

function textOf(content: unknown): string {
  if (typeof content === "string") return content;
  return blocks(content)
    .filter((b) => b.type === "text" && typeof b.text === "string")
    .map((b) => b.text as string)
    .join("\n");
}

/** A typed prompt as UserPromptSubmit would have received it, or null for lines that are not one. */
export function typedPrompt(rec: Rec): string | null {
  if (rec.isMeta === true || rec.isSidechain === true || rec.isCompactSummary === true || rec.isVisibleInTranscriptOnly === true) {
    return null;
  }
  const message = rec.message as { role?: unknown; content?: unknown } | undefined;
  if (!message || message.role !== "user") return null;
  if (blocks(message.content).some((b) => b.type === "tool_result")) return null;
  let text = textOf(message.content);
  if (!text.trim()) return null;
  if (/^\s*<(?:local-command-stdout|local-command-stderr|local-command-caveat|system-reminder)>/.test(text)) return null;
  if (/^\[Request interrupted by user/.test(text)) return null;
  // a slash command: the hook saw what was typed, the transcript keeps it tagged
  const cmd = /<command-name>([^<]*)<\/command-name>/.exec(text);
  if (cmd) {
    const args = /<command-args>([^<]*)<\/command-args>/.exec(text)?.[1] ?? "";
    text = `${cmd[1]!.trim()}${args.trim() ? ` ${args.trim()}` : ""}`;
  }
  return text;
}

function resultText(block: Block, rec: Rec): string {
  const parts: string[] = [];
  const tur = rec.toolUseResult;
  if (tur && typeof tur === "object") {
    for (const k of ["stdout", "stderr"]) {
      const v = (tur as Rec)[k];
      if (typeof v === "string" && v) parts.push(v);
    }
  } else if (typeof tur === "string") parts.push(tur);
  if (parts.length === 0) parts.push(typeof block.content === "string" ? block.content : textOf(block.content));
  return parts.join("\n");
}

function answersOf(rec: Rec): { question: string; answer: string }[] {
  const tur = rec.toolUseResult as { answers?: unknown } | undefined;
  const answers = tur && typeof tur === "object" ? tur.answers : undefined;
  if (!answers || typeof answers !== "object" || Array.isArray(answers)) return [];
  return Object.entries(answers as Record<string, unknown>)
    .filter((kv): kv is [string, string] => typeof kv[1] === "string")
    .map(([question, answer]) => ({ question, answer }));
}

/** Where a tool call ran, as the transcript line that asked for it says. */
interface CallPlace {
  cwd?: string;
  branch?: string;
}

/**
 * Claude Code's message blocks read into events, for every transcript that holds them (Claude Code, Factory Droid,
 * Cursor): an assistant message's text and tool_use blocks, then the tool_result blocks that answer them. A shell
 * call (one of `shellTools`) whose block carries no id (Cursor) has no result to wait for: it is an event at once.
 */
export class BlockReader {
  readonly events: PastEvent[] = [];
  private readonly pending = new Map<string, { name: string; input: Rec; time: number } & CallPlace>();

  constructor(
    private readonly shellTools: readonly string[],
    private readonly questionTools: readonly string[] = ["AskUserQuestion"],
  ) {}

  /** An assistant message: its text, and its tool calls kept until their results come. */
  assistant(content: unknown, time: number, place: CallPlace = {}): void {
    const text = textOf(content);
    if (text.trim()) this.events.push({ kind: "assistant", text, time });
    for (const b of blocks(content)) {
      if (b.type !== "tool_use" || typeof b.name !== "string") continue;
      const input = (b.input && typeof b.input === "object" ? b.input : {}) as Rec;
      if (typeof b.id === "string") this.pending.set(b.id, { name: b.name, input, time, ...place });
      else if (this.shellTools.includes(b.name) && typeof input.command === "string") {
        this.events.push({ kind: "shell", command: input.command, output: "", failed: false, start: time, end: time, ...place });
      }
    }
  }

  /** A user message holding tool results: the calls they answer become events. */
  results(content: unknown, time: number, rec: Rec): void {
    for (const b of blocks(content)) {
      if (b.type !== "tool_result" || typeof b.tool_use_id !== "string") continue;
      const use = this.pending.get(b.tool_use_id);
      if (!use) continue;
      this.pending.delete(b.tool_use_id);
      if (this.questionTools.includes(use.name)) {
        const answers = answersOf(rec);
        if (answers.length) this.events.push({ kind: "question", answers, time });
      } else if (this.shellTools.includes(use.name) && typeof use.input.command === "string") {
        this.events.push({
          kind: "shell",
          command: use.input.command,
          output: clipOutput(resultText(b, rec)),
          failed: b.is_error === true,
          start: use.time,
          end: time,
          cwd: use.cwd,
          branch: use.branch,
        });
      }
    }
  }
}

/** Reads one Claude Code transcript: its session facts and its events, streamed. */
export async function readClaudeTranscript(path: string, onLongLine?: OnLongLine): Promise<{ meta: PastSessionMeta; events: PastEvent[] }> {
  const meta: PastSessionMeta = { sessionId: null, cwd: null, branch: null, agent: "claude", firstTime: null, lastTime: null };
  const reader = new BlockReader(["Bash"]);
  for await (const rec of jsonlRecords(path, onLongLine)) {
    if (rec.isSidechain === true) continue;
    const time = timeOf(rec.timestamp);
    noteTime(meta, time);
    if (typeof rec.sessionId === "string") meta.sessionId ??= rec.sessionId;
    if (typeof rec.cwd === "string") meta.cwd ??= rec.cwd;
    if (typeof rec.gitBranch === "string" && rec.gitBranch) meta.branch = rec.gitBranch;
    const message = rec.message as { role?: unknown; content?: unknown; model?: unknown } | undefined;
    if (!message) continue;
    if (rec.type === "assistant" && message.role === "assistant") {
      if (message.model === "<synthetic>") continue;
      reader.assistant(message.content, time, {
        cwd: typeof rec.cwd === "string" ? rec.cwd : undefined,
        branch: typeof rec.gitBranch === "string" ? rec.gitBranch : undefined,
      });
      continue;
    }
    if (rec.type !== "user" || message.role !== "user") continue;
    const prompt = typedPrompt(rec);
    if (prompt !== null) reader.events.push({ kind: "prompt", text: prompt, time });
    else reader.results(message.content, time, rec);
  }
  return { meta, events: reader.events };
}
