import type { RedactOptions } from "../../redact/index.ts";
import type { Entry } from "../../store/entry.ts";
import type { StoreRepo } from "../../store/branch.ts";
import { moveEntries, readEntry, updateEntry } from "../../store/timeline.ts";
import { AGENT_TYPE, type AgentName } from "../session.ts";
import type { Delta } from "./delta.ts";
import type { CommitFacts } from "./facts.ts";
import { inferTag, mergeSummary } from "./facts.ts";
import { groupRootFor } from "./grouping.ts";
import { completeFingerprint, fingerprintField, type Fingerprint } from "../links/fingerprint.ts";
import { ObjectStore } from "../../store/objects.ts";

/** Appends JSONL text to a snippet, keeping one record per line. */
export function appendSnippet(a: string, b: string): string {
  if (!b) return a;
  if (!a) return b;
  return a.endsWith("\n") ? a + b : `${a}\n${b}`;
}

export interface FirstVersionInput {
  repo: StoreRepo;
  facts: CommitFacts;
  /** the commit this one amended, when it came from `git commit --amend` */
  amendedFrom?: string;
  sessionId: string;
  agent: AgentName;
  branch: string;
  delta: Pick<Delta, "text" | "hasUser" | "continuation">;
  /** the session's previous entry (SPEC §5) */
  previous: Pick<Entry, "commitHash" | "groupRootId"> | null;
  redact: RedactOptions;
  now?: Date;
  /** what the hooks know of the session beyond its conversation */
  about?: SessionAbout;
}

/** What the hooks learnt about a session: the agent's model, the session a `/clear` handoff continued. */
export interface SessionAbout {
  model?: string;
  continuedFrom?: string;
}

/** The optional entry fields of who ran a session and with what; absent values are left out. */
export function aboutFields(author: string | undefined, about: SessionAbout = {}): Pick<Entry, "author" | "model" | "continuedFrom"> {
  return {
    ...(author ? { author } : {}),
    ...(about.model ? { model: about.model } : {}),
    ...(about.continuedFrom ? { continuedFrom: about.continuedFrom } : {}),
  };
}

/** The longest patch the worker reads for a commit's patch id: past it (huge generated files) the line hashes do. */
export const WORKER_PATCH_MAX_BYTES = 32 * 1024 * 1024;

/**
 * A commit's whole fingerprint, patch id included; without git's answer (no git, a failure, a patch over
 * `maxBytes`), the line hashes read from the objects alone; none when even those cannot be read. A capture never
 * fails over it.
 */
export async function wholeFingerprint(commonDir: string, hash: string, maxBytes = WORKER_PATCH_MAX_BYTES): Promise<Fingerprint | undefined> {
  const whole = await completeFingerprint(commonDir, hash, undefined, maxBytes);
  if (whole) return whole;
  const store = new ObjectStore(commonDir);
  try {
    return fingerprintField(store, hash).fingerprint;
  } finally {
    store.close();
  }
}

/**
 * Writes the first version of a commit's entry (the agent's summary comes later through `capture`). When the
 * commit already has an entry, e.g. moved there by git's post-rewrite hook after an amend, the new delta is added
 * to it instead, so there is never a second entry.
 */
export async function writeFirstVersion(input: FirstVersionInput): Promise<Entry> {
  const { repo, facts } = input;
  const now = (input.now ?? new Date()).toISOString();
  // What recognises the change once the commit is squashed or rebased away, whole (its patch id from git, which runs
  // beside the rest): the entry is written in the background, so `capture` and the squash matcher find it complete.
  const fingerprinting = wholeFingerprint(repo.commonDir, facts.hash);
  if (input.amendedFrom && (await readEntry(repo, input.amendedFrom))) {
    // post-rewrite did not run (not installed): move the amended commit's entry here ourselves
    await moveEntries(repo, [[input.amendedFrom, facts.hash]], { redact: input.redact });
  }
  const mergeDefault = mergeSummary(repo.commonDir, facts);
  const fingerprint = await fingerprinting;
  const stored = await updateEntry(
    repo,
    facts.hash,
    (current) => {
      if (current) {
        return {
          ...aboutFields(facts.committer, input.about),
          ...current,
          changedFiles: facts.changedFiles,
          ...(facts.renames.length ? { renames: facts.renames } : {}),
          conversationSnippet: appendSnippet(current.conversationSnippet, input.delta.text),
          continuation: current.continuation || input.delta.continuation,
          committedAt: current.committedAt ?? facts.committedAt,
          capturedAt: now,
          ...(fingerprint ? { fingerprint } : {}),
        };
      }
      return {
        commitHash: facts.hash,
        title: facts.subject,
        intent: "",
        alternatives: "",
        diffSummary: mergeDefault,
        tag: inferTag(facts.subject, facts.changedFiles),
        changedFiles: facts.changedFiles,
        ...(facts.renames.length ? { renames: facts.renames } : {}),
        agentType: AGENT_TYPE[input.agent],
        claudeSessionId: input.sessionId,
        branch: input.branch,
        conversationSnippet: input.delta.text,
        continuation: input.delta.continuation,
        groupRootId: groupRootFor(input.previous, input.delta.hasUser),
        capturedAt: now,
        summaryStatus: "pending",
        committedAt: facts.committedAt,
        recordedAt: now,
        ...aboutFields(facts.committer, input.about),
        ...(fingerprint ? { fingerprint } : {}),
      };
    },
    { redact: input.redact },
  );
  if (!stored) throw new Error("entry was not written");
  return stored;
}

