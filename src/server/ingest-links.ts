/** Checks a link sent by `aiflare sync` (store/links.ts): only hashes, numbers and the method; nothing else is kept. */
import * as v from "valibot";
import { LinkSchema, type Link } from "../store/links.ts";

/** The link as stored (known fields only), or null when it is not one. */
export function checkLink(raw: unknown): Link | null {
  const r = v.safeParse(LinkSchema, raw);
  if (!r.success) return null;
  const l = r.output;
  return {
    commitHash: l.commitHash,
    method: l.method,
    parts: l.parts.map((p) => ({ commitHash: p.commitHash, method: p.method, lines: p.lines })),
    coverage: l.coverage,
    computedAt: l.computedAt,
  };
}
