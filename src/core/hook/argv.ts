import { HOOK_PARSERS } from "../../agents/index.ts";
import { AGENT_EVENTS, type AgentEvent, type AgentName } from "../../agents/types.ts";

/**
 * The event and agent of a plain `hook <agent event> [--agent claude|codex]` command line, which the
 * executable's entry handles without loading the CLI; null for anything else (the CLI parses it).
 */
export function agentHookCall(argv: string[]): { event: AgentEvent; agent: AgentName } | null {
  if (argv[0] !== "hook" || !(AGENT_EVENTS as readonly string[]).includes(argv[1] ?? "")) return null;
  const rest = argv.slice(2);
  let agent: string | undefined = "claude";
  if (rest.length === 2 && rest[0] === "--agent") agent = rest[1];
  else if (rest.length === 1 && rest[0]!.startsWith("--agent=")) agent = rest[0]!.slice("--agent=".length);
  else if (rest.length !== 0) return null;
  if (!agent || !Object.hasOwn(HOOK_PARSERS, agent)) return null;
  return { event: argv[1] as AgentEvent, agent: agent as AgentName };
}
