/**
 * The why of a path, as `aiflare why` tells it: every commit that touched a file or anything under a directory,
 * newest first, renames followed; each entry with its intent, and the commits that have no entry. A directory
 * also lists its files, a renamed file once under its last name. The team server has no git: it lists the
 * entries that name the path.
 */
import { get, MODE, type DirectoryFile, type FileAnswer, type FileCommit, type Summary } from "./api.ts";
import { h, mount } from "./dom.ts";
import { dateTimeLabel, isPending, shortHash } from "./format.ts";
import { markdown } from "./markdown.ts";
import { entryRow } from "./timeline.ts";

function intentOf(e: Summary): HTMLElement {
  return e.intent.trim() && !isPending(e)
    ? h("div", { class: "md intent" }, markdown(e.intent))
    : h("p", { class: "intent muted" }, "The agent has not yet written why.");
}

function entryItem(e: Summary, pathThen?: string): HTMLElement {
  return h(
    "div",
    { class: "file-item has-entry", data: { hash: e.commitHash } },
    entryRow(e, { showDate: true }),
    pathThen ? h("p", { class: "path-then muted" }, "as ", h("code", null, pathThen)) : null,
    intentOf(e),
  );
}

function commitItem(c: FileCommit): HTMLElement {
  return h(
    "div",
    { class: "file-item no-entry", data: { hash: c.commitHash } },
    h(
      "div",
      { class: "file-commit" },
      h("code", { class: "hash" }, shortHash(c.commitHash)),
      h("span", { class: "subject" }, c.subject || "(no subject)"),
      h("span", { class: "muted author" }, c.author),
      h("time", { class: "when", attrs: { datetime: c.date } }, dateTimeLabel(new Date(c.date))),
      h("span", { class: "pending" }, "no entry"),
    ),
    c.pathThen ? h("p", { class: "path-then muted" }, "as ", h("code", null, c.pathThen)) : null,
  );
}

function filesOf(files: DirectoryFile[]): HTMLElement {
  return h(
    "section",
    { class: "dir-files-box" },
    h("h3", null, `Files (${files.length})`),
    h(
      "ul",
      { class: "dir-files" },
      files.map((f) =>
        h(
          "li",
          null,
          h("a", { href: `#/file?path=${encodeURIComponent(f.path)}` }, f.path),
          f.formerPaths.length ? h("span", { class: "muted former" }, ` (was ${f.formerPaths.join(", ")})`) : null,
          h("span", { class: "muted" }, ` · ${f.commits} ${f.commits === 1 ? "commit" : "commits"}`),
        ),
      ),
    ),
  );
}

function storyOf(answer: FileAnswer): HTMLElement[] {
  const entries = new Map(answer.entries.map((e) => [e.commitHash, e]));
  if (!answer.commits) return answer.entries.map((e) => entryItem(e));
  const items = answer.commits.map((c) => {
    const e = entries.get(c.commitHash);
    entries.delete(c.commitHash);
    return e ? entryItem(e, c.pathThen) : commitItem(c);
  });
  // entries git did not list (a commit rewritten or pruned, or older than those listed) still belong to the story
  for (const e of entries.values()) items.push(entryItem(e));
  return items;
}

function statusOf(answer: FileAnswer): string {
  const n = answer.entries.length;
  const entries = `${n} ${n === 1 ? "entry" : "entries"}`;
  if (!answer.commits) return n ? `${entries} changed it` : "No recorded entry changed this path.";
  const c = answer.commits.length;
  if (c === 0 && n === 0) return "No commit touched this path.";
  return `${c}${answer.complete === false ? "+" : ""} ${c === 1 ? "commit" : "commits"} touched it; ${entries}`;
}

export async function fileView(main: HTMLElement, path: string): Promise<void> {
  const form = h(
    "form",
    { class: "filters", role: "search" },
    h("label", { class: "field field-q" }, h("span", null, "File or directory"), h("input", { attrs: { name: "path", type: "text", value: path, autocomplete: "off" } })),
    h("div", { class: "actions" }, h("button", { attrs: { type: "submit" } }, "Show")),
  );
  form.addEventListener("submit", (ev) => {
    ev.preventDefault();
    const p = String(new FormData(form).get("path") ?? "").trim();
    location.hash = `#/file?path=${encodeURIComponent(p)}`;
  });
  if (!path) {
    mount(main, h("a", { href: "#/", class: "back" }, "← Timeline"), h("h1", null, "Why a file is as it is"), form);
    return;
  }
  const answer = await get<FileAnswer>("files", { path });
  document.title = `${answer.path} · aiflare`;
  mount(
    main,
    h("a", { href: "#/", class: "back" }, "← Timeline"),
    h("h1", null, h("code", null, answer.path)),
    form,
    h("p", { class: "status muted" }, statusOf(answer)),
    answer.files?.length ? filesOf(answer.files) : null,
    h("div", { class: "card rows file-story" }, storyOf(answer)),
    MODE === "team" && !answer.commits
      ? h("p", { class: "muted note" }, "The team server has no git: renames and the commits without an entry are shown by ", h("code", null, `aiflare why ${answer.path}`), " in a clone.")
      : answer.complete === false
        ? h("p", { class: "muted note" }, "Older commits are not listed here: ", h("code", null, `aiflare why ${answer.path} --limit 0`), " shows them all.")
        : null,
  );
}
