/** An entry: what was done and why, its request group, its files, and the conversation that led to it. */
import { NotFound, get, type CommitFacts, type DiffStatLine, type Entry, type EntryAnswer } from "./api.ts";
import { h, mount, safeHref } from "./dom.ts";
import { agentLabel, dateTimeLabel, entryTime, isPending, labelTurns, parseTurns, pendingBadge, shortHash, tagBadge, turnView } from "./format.ts";
import { markdown } from "./markdown.ts";
import { personFacts, teamBadge } from "./people.ts";
import { linkedView, type LinkedAnswer } from "./linked.ts";

function section(title: string, text: string): HTMLElement {
  return h("section", { class: "prose" }, h("h3", null, title), text.trim() ? h("div", { class: "md" }, markdown(text)) : h("p", { class: "muted" }, "—"));
}

/**
 * The full hash in two halves that each stay whole: on a narrow screen it breaks in the middle, never leaving a
 * lone character on a line of its own. Copied, it is still one 40-character word.
 */
function fullHash(hash: string): HTMLElement {
  return h("code", { class: "full-hash" }, h("span", null, hash.slice(0, 20)), h("wbr"), h("span", null, hash.slice(20)));
}

/** A command shown as text with a button that copies it (selecting it where the clipboard is not offered). */
function copyable(text: string): HTMLElement {
  const code = h("code", { class: "command" }, text);
  const button = h("button", { class: "copy", attrs: { type: "button", "aria-label": `Copy ${text}` } }, "Copy");
  button.addEventListener("click", () => {
    const done = () => {
      button.textContent = "Copied";
      setTimeout(() => (button.textContent = "Copy"), 1500);
    };
    const select = () => {
      const range = document.createRange();
      range.selectNodeContents(code);
      getSelection()?.removeAllRanges();
      getSelection()?.addRange(range);
    };
    if (navigator.clipboard) navigator.clipboard.writeText(text).then(done, select);
    else select();
  });
  return h("span", { class: "copyable" }, code, button);
}

function forgeLink(url: string): HTMLElement | null {
  const href = safeHref(url);
  if (!href || href.startsWith("#")) return null;
  return h("a", { href, class: "forge-link", attrs: { target: "_blank" } }, `Open on ${new URL(href).host}`);
}

function statLine(f: DiffStatLine): HTMLElement {
  const binary = f.added === null || f.removed === null;
  return h(
    "li",
    null,
    h("a", { href: `#/file?path=${encodeURIComponent(f.path)}`, class: "stat-path" }, f.path),
    f.from !== undefined ? h("span", { class: "muted stat-from" }, ` ← ${f.from}`) : null,
    binary
      ? h("span", { class: "stat-counts muted" }, "binary")
      : h("span", { class: "stat-counts" }, h("span", { class: "added" }, `+${f.added}`), " ", h("span", { class: "removed" }, `−${f.removed}`)),
  );
}

/** The patch as text, each line marked by what it is (added, removed, hunk, file header) for colour alone. */
function patchView(text: string): HTMLElement {
  const pre = h("pre", { class: "patch" });
  for (const line of text.split("\n")) {
    const kind = /^(\+\+\+|---|diff |index |rename |similarity |new file|deleted file)/.test(line)
      ? "meta"
      : line.startsWith("@@")
        ? "hunk"
        : line.startsWith("+")
          ? "add"
          : line.startsWith("-")
            ? "del"
            : "";
    pre.appendChild(h("span", kind ? { class: kind } : null, line, "\n"));
  }
  return pre;
}

/** The commit's changes: git's diff stat and patch where git is at hand, else the files the entry lists. */
function changesView(e: Entry, commit: CommitFacts | undefined): HTMLElement {
  const fileList = () =>
    e.changedFiles.length
      ? h("ul", null, e.changedFiles.map((f) => h("li", null, h("a", { href: `#/file?path=${encodeURIComponent(f)}` }, f))))
      : h("p", { class: "muted" }, "—");
  const diff = commit?.diff;
  if (!diff) {
    const why =
      commit?.diffMissing === "gone"
        ? "This commit is no longer in the repository (rewritten or pruned): the entry's list of files is what is left."
        : commit?.diffMissing === "remote"
          ? "The team server keeps no patches. In a clone of the repository, see this commit's patch with:"
          : null;
    return h(
      "section",
      { class: "files" },
      h("h3", null, `Changed files (${e.changedFiles.length})`),
      fileList(),
      why ? h("p", { class: "muted patch-note" }, why, commit?.diffMissing === "remote" ? [" ", copyable(commit.show)] : null) : null,
    );
  }
  let added = 0;
  let removed = 0;
  for (const f of diff.stat) {
    added += f.added ?? 0;
    removed += f.removed ?? 0;
  }
  const n = diff.stat.length;
  return h(
    "section",
    { class: "files" },
    h("h3", null, `Changed files (${n}${diff.statTruncated ? "+" : ""})`),
    h("p", { class: "stat-total" }, `${n} ${n === 1 ? "file" : "files"} changed, `, h("span", { class: "added" }, `+${added}`), " ", h("span", { class: "removed" }, `−${removed}`)),
    h("ul", { class: "stat" }, diff.stat.map(statLine)),
    h(
      "details",
      { class: "patch-box", attrs: diff.patch.length <= 64 * 1024 ? { open: "" } : {} },
      h("summary", null, "Patch"),
      diff.patchTruncated ? h("p", { class: "patch-note" }, `The patch is cut at 256 KB. See all of it with `, copyable(commit!.show)) : null,
      patchView(diff.patch),
    ),
  );
}

export async function entryView(main: HTMLElement, ref: string): Promise<void> {
  if (!/^[0-9a-f]{4,40}$/i.test(ref)) throw new NotFound(`no entry for commit ${ref}: a commit is named by 4 to 40 hex digits`);
  const answer = await get<EntryAnswer | LinkedAnswer>(`entries/${encodeURIComponent(ref)}`);
  if (answer.entry === null) return linkedView(main, answer);
  const { entry: e, group, commit } = answer;
  const turns = labelTurns(parseTurns(e.conversationSnippet));
  const root = e.groupRootId ?? e.commitHash;
  document.title = `${e.title} · aiflare`;
  mount(
    main,
    h("a", { href: "#/", class: "back" }, "← Timeline"),
    h(
      "article",
      { class: "entry" },
      h("h1", null, e.title || "(untitled)"),
      h("div", { class: "badges" }, tagBadge(e.tag), isPending(e) ? pendingBadge() : null, e.summaryStatus === "imported" ? h("span", { class: "imported" }, "imported") : null, teamBadge(e)),
      h(
        "dl",
        { class: "facts" },
        h("dt", null, "Commit"),
        h("dd", null, fullHash(e.commitHash)),
        h("dt", null, "Show it"),
        h("dd", null, copyable(commit?.show ?? `git show ${e.commitHash}`), commit?.forgeUrl ? [" ", forgeLink(commit.forgeUrl)] : null),
        h("dt", null, "Branch"),
        h("dd", null, h("a", { href: `#/?branch=${encodeURIComponent(e.branch)}` }, e.branch)),
        h("dt", null, "Session"),
        h("dd", null, h("a", { href: `#/session/${encodeURIComponent(e.claudeSessionId)}`, class: "session-link" }, e.claudeSessionId)),
        h("dt", null, "Agent"),
        h("dd", null, agentLabel(e.agentType)),
        personFacts(e),
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
      changesView(e, commit),
      h(
        "section",
        { class: "prompts", attrs: { "aria-label": "Related prompts" } },
        h("h3", null, "Related prompts"),
        turns.length
          ? turns.map((t) => turnView(t.label, t.kind, t.content, t.kind === "assistant" || t.kind === "question"))
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
