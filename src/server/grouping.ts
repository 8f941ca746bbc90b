import { groupRootFor } from "../core/capture/grouping.ts";

/** One stored entry of a session, as regrouping sees it. */
export interface GroupMember {
  commitHash: string;
  groupRootId: string | null;
  /** the server decided groupRootId (the client sent none) */
  auto: boolean;
  hasUser: boolean;
  continuation: boolean;
}

/**
 * The group roots the server decides (SPEC §5), for a session's entries in commit order: each entry the client sent
 * without `groupRootId` follows its previous entry. Run again whenever an entry of the session arrives, so an
 * earlier entry that arrives late still becomes the root of those after it. Returns the changed members only.
 */
export function regroup(members: GroupMember[]): { commitHash: string; groupRootId: string | null }[] {
  const changed: { commitHash: string; groupRootId: string | null }[] = [];
  let previous: GroupMember | null = null;
  for (const m of members) {
    if (m.auto) {
      // the server sees only whether the snippet has a user line and whether a question was answered: a user line
      // with an answer is taken as the answer (SPEC §5 example B)
      const root = groupRootFor(previous, m.hasUser && !m.continuation);
      if (root !== m.groupRootId) {
        changed.push({ commitHash: m.commitHash, groupRootId: root });
        m.groupRootId = root;
      }
    }
    previous = m;
  }
  return changed;
}
