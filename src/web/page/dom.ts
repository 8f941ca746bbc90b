/**
 * Building DOM nodes from untrusted text: strings only ever become text nodes or checked attribute values, so
 * no stored field can become markup or script.
 */

export type Child = Node | string | number | null | undefined | false | Child[];

export interface Props {
  class?: string;
  href?: string;
  title?: string;
  id?: string;
  role?: string;
  tabindex?: number;
  data?: Record<string, string>;
  attrs?: Record<string, string>;
  on?: Partial<Record<keyof HTMLElementEventMap, (ev: Event) => void>>;
}

/** Links the page may hold: its own routes, or plain web addresses opened without passing anything on. */
export function safeHref(href: string): string | null {
  if (href.startsWith("#")) return href;
  try {
    const u = new URL(href);
    return u.protocol === "https:" || u.protocol === "http:" ? u.href : null;
  } catch {
    return null;
  }
}

function append(parent: Node, child: Child): void {
  if (child === null || child === undefined || child === false) return;
  if (Array.isArray(child)) {
    for (const c of child) append(parent, c);
    return;
  }
  parent.appendChild(typeof child === "string" || typeof child === "number" ? document.createTextNode(String(child)) : child);
}

/** An element with properties and children; text children are text nodes. */
export function h<K extends keyof HTMLElementTagNameMap>(tag: K, props: Props | null = null, ...children: Child[]): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  if (props) {
    if (props.class) el.className = props.class;
    if (props.id) el.id = props.id;
    if (props.title) el.title = props.title;
    if (props.role) el.setAttribute("role", props.role);
    if (props.tabindex !== undefined) el.tabIndex = props.tabindex;
    if (props.href !== undefined) {
      const href = safeHref(props.href);
      if (href) {
        el.setAttribute("href", href);
        if (!href.startsWith("#")) el.setAttribute("rel", "noopener noreferrer nofollow");
      }
    }
    for (const [k, v] of Object.entries(props.data ?? {})) el.dataset[k] = v;
    for (const [k, v] of Object.entries(props.attrs ?? {})) {
      if (/^on/i.test(k) || k === "style" || k === "href" || k === "src") continue;
      el.setAttribute(k, v);
    }
    for (const [k, fn] of Object.entries(props.on ?? {})) if (fn) el.addEventListener(k, fn);
  }
  for (const c of children) append(el, c);
  return el;
}

const SVG_NS = "http://www.w3.org/2000/svg";

/** An SVG element with numeric or text attributes. */
export function svg(tag: string, attrs: Record<string, string | number> = {}, ...children: Child[]): SVGElement {
  const el = document.createElementNS(SVG_NS, tag) as SVGElement;
  for (const [k, v] of Object.entries(attrs)) el.setAttribute(k, String(v));
  for (const c of children) append(el, c);
  return el;
}

/** Replaces the children of `parent`. */
export function mount(parent: Element, ...children: Child[]): void {
  parent.replaceChildren();
  for (const c of children) append(parent, c);
}
