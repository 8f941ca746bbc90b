/** A commit with no entry of its own that landed recorded changes (a squash, a rebase-merge copy): its parts. */
import type { Summary } from "./api.ts";
import { h, mount } from "./dom.ts";
import { shortHash } from "./format.ts";
import { markdown } from "./markdown.ts";
import { entryRow } from "./timeline.ts";

/** The entry page's answer for such a commit (see README "Squash and rebase merges"). */
export interface LinkedAnswer {
  entry: null;
  commitHash: string;
  link: { method: "patch-id" | "squash"; coverage: number; parts: { commitHash: string; lines: number }[] };
  parts: Summary[];
}

/** "via squash 72d6dd0 of 3 agent commits" and each part with its intent. */
export function linkedView(main: HTMLElement, answer: LinkedAnswer): void {
  const n = answer.parts.length;
  const how =
    answer.link.method === "patch-id"
      ? `the same patch as ${n === 1 ? "an agent commit" : `${n} agent commits`} (rebase-merge or cherry-pick)`
      : `a squash of ${n} agent commit${n === 1 ? "" : "s"} (${Math.round(answer.link.coverage * 100)}% of its lines)`;
  document.title = `${shortHash(answer.commitHash)} · aiflare`;
  mount(
    main,
    h("a", { href: "#/", class: "back" }, "← Timeline"),
    h(
      "article",
      { class: "entry linked" },
      h("h1", null, `Commit ${shortHash(answer.commitHash)}`),
      h("p", { class: "muted" }, `No entry of its own: ${how}.`),
      ...answer.parts.map((p) =>
        h("section", { class: "prose part" }, entryRow(p, { showDate: true }), p.intent.trim() ? h("div", { class: "md" }, markdown(p.intent)) : h("p", { class: "muted" }, "—")),
      ),
    ),
  );
}
