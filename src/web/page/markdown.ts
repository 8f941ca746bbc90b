/**
 * Markdown (the subset markdown-parse.ts reads) rendered straight to DOM nodes. Raw HTML in the source stays text;
 * a link becomes an anchor only for http(s) addresses.
 */
import { h, safeHref, type Child } from "./dom.ts";
import { parseMarkdown, type Block, type Span } from "./markdown-parse.ts";

function span(s: Span): Child {
  switch (s.kind) {
    case "text":
      return s.text;
    case "code":
      return h("code", null, s.text);
    case "strong":
      return h("strong", null, s.text);
    case "em":
      return h("em", null, s.text);
    case "link": {
      const href = safeHref(s.href);
      return href && !href.startsWith("#") ? h("a", { href, attrs: { target: "_blank" } }, s.text) : s.source;
    }
  }
}

// children are passed as one array: a long paragraph has more spans than a call can take as arguments
const spans = (list: Span[]): Child[] => list.map(span);

function block(b: Block): Node {
  switch (b.kind) {
    case "p":
      return h("p", null, spans(b.spans));
    case "h":
      return h("h4", { class: "md-h" }, spans(b.spans));
    case "pre":
      return h("pre", null, h("code", null, b.text));
    case "list":
      return h(b.ordered ? "ol" : "ul", null, b.items.map((item) => h("li", null, spans(item))));
  }
}

/** Block structure of `source` as a fragment. */
export function markdown(source: string): DocumentFragment {
  const frag = document.createDocumentFragment();
  for (const b of parseMarkdown(source)) frag.appendChild(block(b));
  return frag;
}
