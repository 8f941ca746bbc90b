/** Pieces of the read API's answers that `aiflare ui` and `aiflare serve` shape the same way. */

/**
 * The group roots a timeline page refers to without holding them (they are on an older page, or outside the
 * filters): the answer carries them as `roots`, so a nested commit is never shown without its request.
 */
export function missingRoots(page: { commitHash: string; groupRootId: string | null }[]): string[] {
  const shown = new Set(page.map((e) => e.commitHash));
  const out = new Set<string>();
  for (const e of page) if (e.groupRootId && !shown.has(e.groupRootId)) out.add(e.groupRootId);
  return [...out];
}
