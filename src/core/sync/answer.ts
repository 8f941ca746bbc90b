/**
 * What a backend's answer to a batch says about each entry sent. `aiflare serve` lists the commits it stored
 * (`commits`) and why it did not store the others (`rejected`: bad data; `conflicts`: it holds a newer capture),
 * also in a 400 or 409 answer; a backend that lists nothing answers for the batch as a whole.
 */
import { oneLine, type SendResult } from "./client.ts";

interface Problem {
  index?: unknown;
  commitHash?: unknown;
  reason?: unknown;
}

export interface BatchOutcome<T> {
  stored: T[];
  notStored: { item: T; reason: string }[];
}

/** The answer per entry of `batch` (in the order sent), or null when the answer does not list entries. */
export function batchOutcome<T extends { commitHash: string }>(batch: T[], r: SendResult): BatchOutcome<T> | null {
  if (!r.ok && r.kind !== "rejected") return null;
  let answer: { commits?: unknown; rejected?: unknown; conflicts?: unknown };
  try {
    answer = JSON.parse(r.body ?? "");
  } catch {
    return null;
  }
  if (!answer || typeof answer !== "object" || !Array.isArray(answer.commits)) return null;
  const stored = new Set(answer.commits.filter((c): c is string => typeof c === "string"));
  const why = new Map<number, string>();
  const note = (list: unknown, prefix: string) => {
    if (!Array.isArray(list)) return;
    for (const p of list as Problem[]) {
      if (!p || typeof p !== "object" || typeof p.reason !== "string") continue;
      const at = typeof p.index === "number" && batch[p.index]?.commitHash === p.commitHash ? p.index : batch.findIndex((b) => b.commitHash === p.commitHash);
      if (at >= 0) why.set(at, `${prefix}: ${oneLine(p.reason)}`);
    }
  };
  note(answer.rejected, "refused by the backend");
  note(answer.conflicts, "not stored");
  const out: BatchOutcome<T> = { stored: [], notStored: [] };
  batch.forEach((item, i) => {
    if (stored.has(item.commitHash)) out.stored.push(item);
    else out.notStored.push({ item, reason: why.get(i) ?? "not stored: the backend's answer does not list it" });
  });
  return out;
}
