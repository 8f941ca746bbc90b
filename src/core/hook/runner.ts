import { HOOK_OUTPUTS, HOOK_PARSERS, HOST_AGENT_ENV } from "../../agents/index.ts";
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

/** Which payload fields were wrong, from a validation error, without the values (they may be prompt text). */
function payloadProblem(err: unknown): string {
  const issues = (err as { issues?: { path?: { key?: unknown }[] }[] }).issues;
  if (!Array.isArray(issues)) return err instanceof Error ? err.name : "invalid";
  const fields = issues.map((i) => (i.path ?? []).map((p) => String(p.key)).join(".") || "(payload)");
  return `wrong or missing: ${[...new Set(fields)].slice(0, 5).join(", ")}`;
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
    const repo = findRepo(input.cwd ?? opts.cwd);
    if (!repo) return "";
    logger = createLogger({ component: `hook ${opts.event}`, stderr: true, root: repo.root });
    if (!isValidSessionId(input.sessionId)) {
      // the id itself is untrusted: only its length is logged, and no session file is written
      logger.log("warn", "invalid session id; nothing written", { length: input.sessionId.length });
      return "";
    }
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
    if (output === undefined) return "";
    const shape = HOOK_OUTPUTS[opts.agent];
    return `${JSON.stringify(shape ? shape(output) : output)}\n`;
  } catch (err) {
    logger.log("error", `hook failed: ${describeError(err)}`);
    return "";
  }
}
