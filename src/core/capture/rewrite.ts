import { finishQueued } from "./queue.ts";
import { moveEntries } from "../../store/timeline.ts";
import { linkAfterRebase } from "../links/landed.ts";
import { createLogger } from "../log.ts";
import { findRepo } from "../repo.ts";
import { describeError } from "../../errors.ts";
import { redactOptionsFor } from "../config-files.ts";

/** Parses git's post-rewrite stdin: `<old> <new> [extra]` per line. */
export function parseRewritePairs(text: string): [string, string][] {
  const out: [string, string][] = [];
  for (const line of text.split("\n")) {
    const m = /^([0-9a-f]{40}) ([0-9a-f]{40})(?: |$)/.exec(line.trim());
    if (m) out.push([m[1]!, m[2]!]);
  }
  return out;
}

/**
 * git's post-rewrite hook (`amend` or `rebase`): moves the entries of rewritten commits to their new hashes; after
 * a rebase, links the commits it rebased onto (see links/landed.ts).
 * Never throws; failures go to the repository's aiflare log. Returns how many entries moved.
 */
export async function runPostRewrite(opts: { kind: string | undefined; stdin: string; cwd: string }): Promise<number> {
  const repo = findRepo(opts.cwd);
  if (!repo) return 0;
  const logger = createLogger({ component: "hook post-rewrite", stderr: true, root: repo.root });
  try {
    const pairs = parseRewritePairs(opts.stdin);
    if (pairs.length === 0) return 0;
    // an amended commit's entry may still be queued: it is written before it moves
    await finishQueued(repo.commonDir);
    const moved = await moveEntries(repo, pairs, { redact: await redactOptionsFor(repo.root, logger) });
    if (moved) logger.log("info", "moved entries", { kind: opts.kind, moved });
    // a rebase onto commits that arrived (git pull --rebase): the squashes among them get their links
    if (opts.kind === "rebase") await linkAfterRebase(opts.cwd);
    return moved;
  } catch (err) {
    logger.log("error", `post-rewrite failed: ${describeError(err)}`);
    return 0;
  }
}
