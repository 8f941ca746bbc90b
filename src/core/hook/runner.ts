import { readFileSync } from "node:fs";
import { join } from "node:path";
import { HOOK_OUTPUTS, HOOK_PARSERS, HOST_AGENT_ENV, OWN_HOOK_FILES, REPLY_BEFORE_STOP } from "../../agents/index.ts";
import type { AgentEvent, HookInput } from "../../agents/types.ts";
import { describeError } from "../../errors.ts";
import { ensureContextDir, readOwnFile, writeOwnFile } from "../fsutil.ts";
import { createLogger, type Logger } from "../log.ts";
import { findRepo } from "../repo.ts";
import { isValidSessionId, sessionFiles, type AgentName } from "../session.ts";
import { HANDLERS, IDLE } from "./events.ts";
import type { StdinResult } from "./stdin.ts";

/** A hook taking longer than this is logged as slow. */
const SLOW_MS = 500;

export interface RunHookOptions {
  agent: AgentName;
  event: AgentEvent;
  stdin: () => Promise<StdinResult>;
  env: Record<string, string | undefined>;
  /** used when the payload has no cwd */
  cwd: string;
}

/** Which payload fields were wrong, from a validation error, without the values (they may be prompt text). */
function payloadProblem(err: unknown): string {
  const issues = (err as { issues?: { path?: { key?: unknown }[] }[] }).issues;
  if (!Array.isArray(issues)) return err instanceof Error ? err.name : "invalid";
  const fields = issues.map((i) => (i.path ?? []).map((p) => String(p.key)).join(".") || "(payload)");
  return `wrong or missing: ${[...new Set(fields)].slice(0, 5).join(", ")}`;
}

/** The session id a `continues` file names, when it holds a valid one. */
function readContinues(path: string): string | undefined {
  const id = readOwnFile(path)?.trim();
  return id && isValidSessionId(id) ? id : undefined;
}

/**
 * The session whose files and entries an event belongs to. An agent that starts a new id for the same conversation
 * (a compaction) names the old one once; from then on every event of the new id goes to the old session, so the
 * conversation and its grouping go on as one. A chain of such ids leads back to the first.
 */
function continuedSession(root: string, agent: AgentName, sessionId: string, continues: string | undefined): string {
  const own = sessionFiles(root, agent, sessionId).continues;
  if (continues !== undefined && continues !== sessionId && isValidSessionId(continues)) {
    const first = readContinues(sessionFiles(root, agent, continues).continues) ?? continues;
    if (first !== sessionId) {
      writeOwnFile(own, `${first}\n`);
      return first;
    }
  }
  return readContinues(own) ?? sessionId;
}

/**
 * True when the agent's own hook files hold aiflare's hooks for it: then a payload of that agent that came through
 * another agent's hook file is a second call for the same event, and only the agent's own hook records it.
 */
function ownHooksInstalled(root: string, agent: HookInput["agent"], home: string | undefined): boolean {
  for (const rel of OWN_HOOK_FILES[agent] ?? []) {
    const path = rel.startsWith("~/") ? (home ? join(home, rel.slice(2)) : undefined) : join(root, rel);
    if (!path) continue;
    let text: string;
    try {
      text = readFileSync(path, "utf8");
    } catch {
      continue;
    }
    if (text.includes(` hook `) && text.includes(`--agent ${agent}`)) return true;
  }
  return false;
}

/**
 * Runs one agent hook: read and parse the payload, find the repository, validate the session id,
 * dispatch, time it, log any failure. Never throws; returns what to print on stdout ("" for nothing).
 */
export async function runAgentHook(opts: RunHookOptions): Promise<string> {
  const started = performance.now();
  // Until the payload names its cwd, problems go to the log of the repository the hook runs in (if any):
  // a session that records nothing can then be explained. The payload itself is never logged. That repository
  // is looked for only when there is something to log.
  let logger: Logger = {
    log: (...args) => createLogger({ component: `hook ${opts.event}`, stderr: true, root: findRepo(opts.cwd)?.root }).log(...args),
  };
  try {
    const { text, problem } = await opts.stdin();
    // another agent running this agent's hook file (read to the end first): its own hooks record the session
    for (const host of HOST_AGENT_ENV) if (host.agent !== opts.agent && opts.env[host.name] === host.value) return "";
    if (problem === "tty") {
      // someone ran the hook by hand: say so there, leave no trace in the repository
      process.stderr.write(`aiflare: hook ${opts.event} reads a JSON payload on stdin; nothing done\n`);
      return "";
    }
    if (problem) {
      logger.log("warn", `stdin not usable (${problem}); nothing done`);
      return "";
    }
    let raw: unknown;
    try {
      raw = JSON.parse(text);
    } catch {
      logger.log("warn", `payload is not JSON (${text.length} bytes); nothing done`);
      return "";
    }
    let input;
    try {
      input = HOOK_PARSERS[opts.agent](opts.event, raw);
    } catch (err) {
      logger.log("warn", `payload has an unexpected shape; nothing done (${payloadProblem(err)})`);
      return "";
    }
    // an event the adapter recognised as carrying nothing for aiflare, or one whose payload says so: quietly done
    if (input.skip !== undefined || IDLE[opts.event]?.(input)) return "";
    const repo = findRepo(input.cwd ?? opts.cwd);
    if (!repo) return "";
    // another agent's payload through this hook file (Cursor runs Claude Code's hooks): recorded as that agent's,
    // and only here when its own hooks are not installed
    if (input.agent !== opts.agent && ownHooksInstalled(repo.root, input.agent, opts.env.HOME)) return "";
    logger = createLogger({ component: `hook ${opts.event}`, stderr: true, root: repo.root });
    if (!isValidSessionId(input.sessionId)) {
      // the id itself is untrusted: only its length is logged, and no session file is written
      logger.log("warn", "invalid session id; nothing written", { length: input.sessionId.length });
      return "";
    }
    ensureContextDir(repo.root);
    const sessionId = continuedSession(repo.root, opts.agent, input.sessionId, input.continues);
    const output = await HANDLERS[opts.event]({
      input: { ...input, sessionId, replyRecorded: opts.agent === input.agent && REPLY_BEFORE_STOP[input.agent] === true },
      repo,
      files: sessionFiles(repo.root, input.agent, sessionId),
      logger,
      env: opts.env,
    });
    const ms = Math.round(performance.now() - started);
    if (ms > SLOW_MS) logger.log("warn", "slow hook", { ms, session: sessionId });
    const shape = HOOK_OUTPUTS[input.agent];
    const shaped = output && shape ? shape(opts.event, output) : output;
    return shaped === undefined ? "" : `${JSON.stringify(shaped)}\n`;
  } catch (err) {
    logger.log("error", `hook failed: ${describeError(err)}`);
    return "";
  }
}
