/** An entry: what was done and why, its request group, its files, and the conversation that led to it. */
import { get, type EntryAnswer } from "./api.ts";
import { h, mount } from "./dom.ts";
import { agentLabel, dateTimeLabel, entryTime, isPending, labelTurns, parseTurns, pendingBadge, shortHash, tagBadge, turnView } from "./format.ts";
import { markdown } from "./markdown.ts";
import { linkedView, type LinkedAnswer } from "./linked.ts";

function section(title: string, text: string): HTMLElement {
  return h("section", { class: "prose" }, h("h3", null, title), text.trim() ? h("div", { class: "md" }, markdown(text)) : h("p", { class: "muted" }, "—"));
}

export async function entryView(main: HTMLElement, ref: string): Promise<void> {
  const answer = await get<EntryAnswer | LinkedAnswer>(`entries/${encodeURIComponent(ref)}`);
  if (answer.entry === null) return linkedView(main, answer);
  const { entry: e, group } = answer;
  const turns = labelTurns(parseTurns(e.conversationSnippet), e.continuation);
  const root = e.groupRootId ?? e.commitHash;
  document.title = `${e.title} · aiflare`;
  mount(
    main,
    h("a", { href: "#/", class: "back" }, "← Timeline"),
    h(
      "article",
      { class: "entry" },
      h("h1", null, e.title || "(untitled)"),
      h("div", { class: "badges" }, tagBadge(e.tag), isPending(e) ? pendingBadge() : null, e.summaryStatus === "imported" ? h("span", { class: "imported" }, "imported") : null),
      h(
        "dl",
        { class: "facts" },
        h("dt", null, "Commit"),
        h("dd", null, h("code", { class: "full-hash" }, e.commitHash)),
        h("dt", null, "Branch"),
        h("dd", null, h("a", { href: `#/?branch=${encodeURIComponent(e.branch)}` }, e.branch)),
        h("dt", null, "Session"),
        h("dd", null, h("a", { href: `#/session/${encodeURIComponent(e.claudeSessionId)}`, class: "session-link" }, e.claudeSessionId)),
        h("dt", null, "Agent"),
        h("dd", null, agentLabel(e.agentType)),
        h("dt", null, "When"),
        h("dd", null, dateTimeLabel(entryTime(e))),
      ),
      group.length > 1
        ? h(
            "section",
            { class: "group" },
            h("h3", null, `Request group · ${group.length} commits`),
            h(
              "ol",
              null,
              group.map((m) =>
                h(
                  "li",
                  { class: m.commitHash === e.commitHash ? "current" : "" },
                  m.commitHash === root ? null : h("span", { class: "branch-mark" }, "└ "),
                  h("a", { href: `#/entry/${m.commitHash}` }, h("code", null, shortHash(m.commitHash)), " ", m.title || "(untitled)"),
                  m.commitHash === e.commitHash ? h("span", { class: "muted" }, " (this commit)") : null,
                ),
              ),
            ),
          )
        : null,
      section("Intent", e.intent),
      section("Alternatives", e.alternatives),
      section("Diff summary", e.diffSummary),
      h(
        "section",
        { class: "files" },
        h("h3", null, `Changed files (${e.changedFiles.length})`),
        e.changedFiles.length
          ? h("ul", null, e.changedFiles.map((f) => h("li", null, h("a", { href: `#/file?path=${encodeURIComponent(f)}` }, f))))
          : h("p", { class: "muted" }, "—"),
      ),
      h(
        "section",
        { class: "prompts", attrs: { "aria-label": "Related prompts" } },
        h("h3", null, "Related prompts"),
        turns.length
          ? turns.map((t) => turnView(t.label, t.kind, t.content))
          : h(
              "p",
              { class: "muted" },
              root !== e.commitHash ? "No new conversation: this commit answers the same request as " : "No conversation was recorded before this commit.",
              root !== e.commitHash ? h("a", { href: `#/entry/${root}` }, shortHash(root)) : null,
            ),
      ),
    ),
  );
}
