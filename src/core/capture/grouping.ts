import type { Entry } from "../../store/entry.ts";

/**
 * The group root of a new entry (SPEC §5): a first entry, or a new request of the user, starts a group (null); the
 * agent committing on its own, or after the user answered its question, stays in the previous entry's group.
 * `newRequest` is "delta has user": a user line typed before any question of the delta (see `peekDelta`).
 */
export function groupRootFor(previous: Pick<Entry, "commitHash" | "groupRootId"> | null, newRequest: boolean): string | null {
  if (!previous) return null;
  if (newRequest) return null;
  return previous.groupRootId ?? previous.commitHash;
}
