/**
 * A small Markdown subset (headings, paragraphs, lists, code blocks, inline code, bold, italic, links) rendered
 * straight to DOM nodes. Raw HTML in the source stays text; a link becomes an anchor only for http(s) addresses.
 */
import { h, safeHref, type Child } from "./dom.ts";

const INLINE_RE = /(`[^`\n]+`)|(\*\*[^*\n]+\*\*)|(\*[^*\s][^*\n]*\*|(?<!\w)_[^_\n]+_(?!\w))|(\[[^\]\n]+\]\([^)\s]+\))/;

/** Inline spans of one line or paragraph. */
export function inline(text: string): Child[] {
  const out: Child[] = [];
  let rest = text;
  for (let guard = 0; rest && guard < 10_000; guard++) {
    const m = INLINE_RE.exec(rest);
    if (!m) {
      out.push(rest);
      break;
    }
    if (m.index > 0) out.push(rest.slice(0, m.index));
    const tok = m[0];
    if (m[1]) out.push(h("code", null, tok.slice(1, -1)));
    else if (m[2]) out.push(h("strong", null, tok.slice(2, -2)));
    else if (m[3]) out.push(h("em", null, tok.slice(1, -1)));
    else {
      const lm = /^\[([^\]]+)\]\(([^)\s]+)\)$/.exec(tok)!;
      const href = safeHref(lm[2]!);
      out.push(href && !href.startsWith("#") ? h("a", { href, attrs: { target: "_blank" } }, lm[1]!) : tok);
    }
    rest = rest.slice(m.index + tok.length);
  }
  return out;
}

/** Block structure of `source` as a fragment. */
export function markdown(source: string): DocumentFragment {
  const frag = document.createDocumentFragment();
  const lines = source.replace(/\r\n?/g, "\n").split("\n");
  let para: string[] = [];
  let list: { el: HTMLElement; ordered: boolean } | null = null;
  const flushPara = () => {
    if (para.length) frag.appendChild(h("p", null, inline(para.join(" "))));
    para = [];
  };
  const closeList = () => {
    list = null;
  };
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    const fence = /^\s*(```|~~~)/.exec(line);
    if (fence) {
      flushPara();
      closeList();
      const code: string[] = [];
      for (i++; i < lines.length && !lines[i]!.trim().startsWith(fence[1]!); i++) code.push(lines[i]!);
      frag.appendChild(h("pre", null, h("code", null, code.join("\n"))));
      continue;
    }
    if (!line.trim()) {
      flushPara();
      closeList();
      continue;
    }
    const heading = /^(#{1,6})\s+(.*)$/.exec(line);
    if (heading) {
      flushPara();
      closeList();
      frag.appendChild(h("h4", { class: "md-h" }, inline(heading[2]!)));
      continue;
    }
    const item = /^\s*(?:([-*+])|(\d+)[.)])\s+(.*)$/.exec(line);
    if (item) {
      flushPara();
      const ordered = item[2] !== undefined;
      if (!list || list.ordered !== ordered) {
        list = { el: h(ordered ? "ol" : "ul"), ordered };
        frag.appendChild(list.el);
      }
      list.el.appendChild(h("li", null, inline(item[3]!)));
      continue;
    }
    if (list && /^\s{2,}\S/.test(line)) {
      list.el.lastElementChild?.append(" ", ...inline(line.trim()).map((c) => (typeof c === "string" ? c : (c as Node))));
      continue;
    }
    closeList();
    para.push(line.trim());
  }
  flushPara();
  return frag;
}
