/** The project at a glance over a chosen window: entries per day and per tag, and the most active files. */
import { get, type Stats } from "./api.ts";
import { h, mount, svg } from "./dom.ts";
import { TAGS, plural } from "./format.ts";

const WINDOWS = [7, 28, 90, 365];

/** Bars drawn in SVG (they scale with the width); the labels are page text, so they stay readable on a phone. */
function dayChart(perDay: Stats["perDay"]): HTMLElement {
  const w = 560;
  const hgt = 120;
  const max = Math.max(1, ...perDay.map((d) => d.count));
  const bw = w / Math.max(1, perDay.length);
  return h(
    "figure",
    { class: "day-chart" },
    svg(
      "svg",
      { class: "chart", viewBox: `0 0 ${w} ${hgt}`, preserveAspectRatio: "none", role: "img", "aria-label": "Entries per day" },
      perDay.map((d, i) => {
        const bh = Math.round((d.count / max) * hgt);
        return svg("rect", { x: (i * bw + bw * 0.1).toFixed(2), y: hgt - bh, width: Math.max(0.5, bw * 0.8).toFixed(2), height: bh, class: "bar" }, svg("title", {}, `${d.day}: ${d.count}`));
      }),
    ),
    h("figcaption", { class: "axis" }, h("span", null, perDay[0]?.day ?? ""), h("span", null, `at most ${Math.max(0, ...perDay.map((d) => d.count))} a day`), h("span", null, perDay.at(-1)?.day ?? "")),
  );
}

function tagChart(perTag: Stats["perTag"]): HTMLElement {
  const tags = [...new Set([...TAGS, ...Object.keys(perTag)])];
  const max = Math.max(1, ...Object.values(perTag));
  return h(
    "ul",
    { class: "tag-chart", attrs: { "aria-label": "Entries per tag" } },
    tags.map((t) => {
      const n = perTag[t] ?? 0;
      return h(
        "li",
        null,
        h("span", { class: "label" }, t),
        h("span", { class: "track" }, h("span", { class: `fill tagbar-${t.toLowerCase()}`, attrs: { "data-width": String(Math.round((n / max) * 100)) } })),
        h("span", { class: "count" }, String(n)),
      );
    }),
  );
}

/** Widths come from data attributes: the page's policy allows no inline style attributes in markup. */
function sizeBars(root: HTMLElement): void {
  for (const el of root.querySelectorAll<HTMLElement>("[data-width]")) el.style.width = `${el.dataset.width}%`;
}

export async function overviewView(main: HTMLElement, params: URLSearchParams): Promise<void> {
  const days = params.get("days") ?? "28";
  const s = await get<Stats>("stats", { days });
  document.title = "Overview · aiflare";
  mount(
    main,
    h("h1", null, `The last ${days === "1" ? "day" : `${days} days`}`),
    h(
      "nav",
      { class: "windows", attrs: { "aria-label": "Window" } },
      WINDOWS.map((d) => h("a", { href: `#/overview?days=${d}`, class: String(d) === days ? "active" : "" }, `${d} days`)),
    ),
    h(
      "div",
      { class: "figures" },
      h("div", { class: "figure" }, h("strong", null, String(s.entries)), s.entries === 1 ? " entry" : " entries"),
      h("div", { class: "figure" }, h("strong", null, String(s.sessions)), s.sessions === 1 ? " session" : " sessions"),
    ),
    h("section", { class: "card" }, h("h3", null, "Entries per day"), dayChart(s.perDay)),
    h("section", { class: "card" }, h("h3", null, "Entries per tag"), tagChart(s.perTag)),
    h(
      "section",
      { class: "card" },
      h("h3", null, "Most active files"),
      s.topFiles.length
        ? h("ol", { class: "top-files" }, s.topFiles.map((f) => h("li", null, h("a", { href: `#/file?path=${encodeURIComponent(f.path)}` }, f.path), h("span", { class: "muted" }, ` · ${plural(f.count, "entry", "entries")}`))))
        : h("p", { class: "muted" }, "No entries in this period."),
    ),
  );
  sizeBars(main);
}
