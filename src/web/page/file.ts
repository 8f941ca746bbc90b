/** The why of a path: the entries whose commits changed a file or anything under a directory, newest first. */
import { get, type FileAnswer } from "./api.ts";
import { h, mount } from "./dom.ts";
import { entryRow } from "./timeline.ts";

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
    h("p", { class: "status muted" }, answer.entries.length ? `${answer.entries.length} ${answer.entries.length === 1 ? "entry" : "entries"} changed it` : "No recorded entry changed this path."),
    h("div", { class: "card rows" }, answer.entries.map((e) => entryRow(e, { showDate: true }))),
  );
}
