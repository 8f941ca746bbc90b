import type { Entry } from "../../store/entry.ts";

/**
 * The group root of a new entry (SPEC §5): a first entry, or a user's new request in plain text, starts a group
 * (null); the agent committing on its own, or after an AskUserQuestion answer, stays in the previous entry's group.
 */
export function groupRootFor(
  previous: Pick<Entry, "commitHash" | "groupRootId"> | null,
  deltaHasUser: boolean,
  continuation: boolean,
): string | null {
  if (!previous) return null;
  if (deltaHasUser && !continuation) return null;
  return previous.groupRootId ?? previous.commitHash;
}
