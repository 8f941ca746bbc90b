/**
 * The secrets redaction found in a session so far, kept beside its live conversation (`.<agent>-secrets-S`, one
 * `{"kind","value"}` line each), so that every later redaction for the session — another hook process, `aiflare
 * capture`, `sync` — replaces them wherever they are repeated: in the agent's reply, an answer, later prompts and
 * entry fields. The prompt and stop hooks never load it: they only append; it is read and added to where redaction
 * runs.
 *
 * The values are kept as they are. The file sits with the live prompts file, which holds the whole conversation in
 * clear, under the same protection (a user-only file in `.context-capture/`, never opened through a symlink, never
 * committed) and is removed with it. Hashes would hide nothing from someone who can read that directory, and finding
 * a hashed value again would cost a hash of every window of every text redacted instead of one regular-expression
 * pass for all of them.
 */
import { SecretMemory, type RedactOptions } from "../redact/index.ts";
import { readOwnFile } from "./fsutil.ts";
import { appendLogLines } from "./session-log.ts";
import { AGENT_TYPE, isValidSessionId, sessionFiles, type AgentName, type SessionFiles } from "./session.ts";

/** The `{value, kind}` lines of a secrets file (none when it is absent); throws UNSAFE_PATH for a symlink. */
function readKnown(path: string): { value: string; kind: string }[] {
  const text = readOwnFile(path);
  const known: { value: string; kind: string }[] = [];
  if (!text) return known;
  for (const line of text.split("\n")) {
    if (!line) continue;
    try {
      const r = JSON.parse(line) as { value?: unknown; kind?: unknown };
      if (typeof r.value === "string" && typeof r.kind === "string") known.push({ value: r.value, kind: r.kind });
    } catch {
      // a line torn by a failed append: skipped
    }
  }
  return known;
}

/** The secrets remembered in a session's file. */
export function loadSecrets(path: string): SecretMemory {
  return new SecretMemory(readKnown(path));
}

/** Appends the secrets found since they were loaded (nothing when none were). */
export function saveSecrets(path: string, memory: SecretMemory): void {
  const added = memory.takeAdded();
  if (added.length > 0) appendLogLines(path, added);
}

/**
 * Runs the writes of one session with its secrets known to the redactor (`redact` with `known`), then keeps what
 * they found. Failing to keep them never fails the writes: later redactions then find them again by the rules only.
 */
export async function withSessionSecrets<T>(
  files: Pick<SessionFiles, "secrets">,
  redact: RedactOptions,
  run: (redact: RedactOptions) => Promise<T>,
): Promise<T> {
  const known = loadSecrets(files.secrets);
  try {
    return await run({ ...redact, known });
  } finally {
    try {
      saveSecrets(files.secrets, known);
    } catch {
      // see above
    }
  }
}

/** The secrets remembered for session `sessionId` of any agent in the repository at `root` (for sync), or undefined. */
export function sessionSecrets(root: string, sessionId: string, agents: readonly AgentName[] = Object.keys(AGENT_TYPE) as AgentName[]): SecretMemory | undefined {
  if (!isValidSessionId(sessionId)) return undefined;
  const known = agents.flatMap((agent) => readKnown(sessionFiles(root, agent, sessionId).secrets));
  return known.length > 0 ? new SecretMemory(known) : undefined;
}
