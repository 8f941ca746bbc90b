import { HOOK_PARSERS } from "../../agents/index.ts";
import type { AgentEvent } from "../../agents/types.ts";
import { describeError } from "../../errors.ts";
import { ensureContextDir } from "../fsutil.ts";
import { createLogger, type Logger } from "../log.ts";
import { findRepo } from "../repo.ts";
import { isValidSessionId, sessionFiles, type AgentName } from "../session.ts";
import { HANDLERS } from "./events.ts";
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

/**
 * Runs one agent hook: read and parse the payload, find the repository, validate the session id,
 * dispatch, time it, log any failure. Never throws; returns what to print on stdout ("" for nothing).
 */
export async function runAgentHook(opts: RunHookOptions): Promise<string> {
  const started = performance.now();
  let logger: Logger = createLogger({ component: `hook ${opts.event}`, stderr: true });
  try {
    const { text, problem } = await opts.stdin();
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
      logger.log("warn", `payload has an unexpected shape; nothing done (${describeError(err).slice(0, 200)})`);
      return "";
    }
    const repo = findRepo(input.cwd ?? opts.cwd);
    if (!repo) return "";
    if (!isValidSessionId(input.sessionId)) {
      // An untrusted id writes nothing anywhere, not even to the log file.
      logger.log("warn", "invalid session id; nothing written", { length: input.sessionId.length });
      return "";
    }
    logger = createLogger({ component: `hook ${opts.event}`, stderr: true, root: repo.root });
    ensureContextDir(repo.root);
    const sessionId = input.sessionId;
    const output = await HANDLERS[opts.event]({
      input: { ...input, sessionId },
      repo,
      files: sessionFiles(repo.root, opts.agent, sessionId),
      logger,
      env: opts.env,
    });
    const ms = Math.round(performance.now() - started);
    if (ms > SLOW_MS) logger.log("warn", "slow hook", { ms, session: sessionId });
    return output === undefined ? "" : `${JSON.stringify(output)}\n`;
  } catch (err) {
    logger.log("error", `hook failed: ${describeError(err)}`);
    return "";
  }
}
