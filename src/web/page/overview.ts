/** The project at a glance: entries per day and per tag over the last weeks, and the most active files. */
import { get, type Stats } from "./api.ts";
import { h, mount, svg } from "./dom.ts";
import { TAGS } from "./format.ts";

function dayChart(perDay: Stats["perDay"]): SVGElement {
  const w = 560;
  const hgt = 120;
  const max = Math.max(1, ...perDay.map((d) => d.count));
  const bw = w / Math.max(1, perDay.length);
  return svg(
    "svg",
    { class: "chart", viewBox: `0 0 ${w} ${hgt + 16}`, role: "img", "aria-label": "Entries per day" },
    perDay.map((d, i) => {
      const bh = Math.round((d.count / max) * hgt);
      return svg("rect", { x: (i * bw + 1).toFixed(1), y: hgt - bh, width: Math.max(1, bw - 2).toFixed(1), height: bh, class: "bar" }, svg("title", {}, `${d.day}: ${d.count}`));
    }),
    svg("text", { x: 0, y: hgt + 14, class: "axis" }, perDay[0]?.day ?? ""),
    svg("text", { x: w, y: hgt + 14, class: "axis", "text-anchor": "end" }, perDay.at(-1)?.day ?? ""),
  );
}

function tagChart(perTag: Stats["perTag"]): SVGElement {
  const tags = [...new Set([...TAGS, ...Object.keys(perTag)])];
  const max = Math.max(1, ...Object.values(perTag));
  const rowH = 22;
  return svg(
    "svg",
    { class: "chart", viewBox: `0 0 560 ${tags.length * rowH}`, role: "img", "aria-label": "Entries per tag" },
    tags.map((t, i) => {
      const n = perTag[t] ?? 0;
      return svg(
        "g",
        {},
        svg("text", { x: 0, y: i * rowH + 15, class: "label" }, t),
        svg("rect", { x: 110, y: i * rowH + 4, width: Math.max(n ? 2 : 0, Math.round((n / max) * 400)), height: 14, class: `bar tagbar-${t.toLowerCase()}` }),
        svg("text", { x: 520, y: i * rowH + 15, class: "label", "text-anchor": "end" }, String(n)),
      );
    }),
  );
}

export async function overviewView(main: HTMLElement, params: URLSearchParams): Promise<void> {
  const days = params.get("days") ?? "28";
  const s = await get<Stats>("stats", { days });
  document.title = "Overview · aiflare";
  mount(
    main,
    h("h1", null, `The last ${days} days`),
    h("div", { class: "figures" }, h("div", { class: "figure" }, h("strong", null, String(s.entries)), " entries"), h("div", { class: "figure" }, h("strong", null, String(s.sessions)), " sessions")),
    h("section", { class: "card" }, h("h3", null, "Entries per day"), dayChart(s.perDay)),
    h("section", { class: "card" }, h("h3", null, "Entries per tag"), tagChart(s.perTag)),
    h(
      "section",
      { class: "card" },
      h("h3", null, "Most active files"),
      s.topFiles.length
        ? h("ol", { class: "top-files" }, s.topFiles.map((f) => h("li", null, h("a", { href: `#/file?path=${encodeURIComponent(f.path)}` }, f.path), h("span", { class: "muted" }, ` · ${f.count}`))))
        : h("p", { class: "muted" }, "No entries in this period."),
    ),
  );
}
