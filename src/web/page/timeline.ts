/** The timeline: days, session cards, request groups nested under their root; filters live in the URL. */
import { searchWords, wordsPattern } from "../../core/dashboard/answers.ts";
import { TIMELINE_PAGE } from "../../core/dashboard/first-read.ts";
import { Unauthorized, get, readUrl, type MatchContext, type SessionHeading, type Summary, type TimelinePage } from "./api.ts";
import { h, mount, type Child } from "./dom.ts";
import { sessionPerson, teamBadge } from "./people.ts";
import { TAGS, agentLabel, dateTimeLabel, dayKey, dayLabel, entryTime, isPending, pendingBadge, plural, shortHash, tagBadge, timeLabel } from "./format.ts";

/** The filter keys the URL holds (`#/?tag=BUGFIX&q=…`), in the order the form shows them. */
export const FILTER_KEYS = ["q", "tag", "session", "author", "file", "branch", "since", "until"] as const;
type Filters = Partial<Record<(typeof FILTER_KEYS)[number], string>>;

const PAGE = TIMELINE_PAGE;

/** One entry as a row: short hash, tag badge, title, time; members of a group start with └. */
export function entryRow(e: Summary, opts: { member?: boolean; showDate?: boolean; context?: boolean } = {}): HTMLElement {
  const t = entryTime(e);
  return h(
    "a",
    {
      class: `${opts.context ? "context-row" : "entry-row"}${opts.member ? " member" : ""}`,
      href: `#/entry/${e.commitHash}`,
      data: { hash: e.commitHash },
      title: opts.context ? "The request this commit belongs to (outside this list)" : undefined,
    },
    opts.member ? h("span", { class: "branch-mark", attrs: { "aria-hidden": "true" } }, "└") : null,
    h("code", { class: "hash" }, shortHash(e.commitHash)),
    tagBadge(e.tag),
    h("span", { class: "title" }, e.title || "(untitled)"),
    isPending(e) ? pendingBadge() : null,
    teamBadge(e),
    opts.member && e.continuation ? h("span", { class: "continued", title: "Committed after the user answered the agent's question" }, "after the agent's question") : null,
    h("time", { class: "when", attrs: { datetime: t.toISOString() } }, opts.showDate ? dateTimeLabel(t) : timeLabel(t)),
  );
}

/** Under a search result: the words around the hit, the searched words marked. */
function matchLine(m: MatchContext, words: string[]): HTMLElement {
  const re = wordsPattern(words);
  const parts: Child[] = [];
  let at = 0;
  for (const hit of re ? m.text.matchAll(re) : []) {
    parts.push(m.text.slice(at, hit.index), h("mark", null, hit[0]));
    at = hit.index + hit[0].length;
  }
  parts.push(m.text.slice(at));
  return h("p", { class: "match-line" }, h("span", { class: "match-field" }, `${m.field}: `), parts);
}

/** The 💬 line under a request group: what the user asked for. */
function requestLine(text: string): HTMLElement {
  return h("p", { class: "request-line" }, h("span", { attrs: { "aria-hidden": "true" } }, "💬 "), h("q", null, text));
}

/**
 * Rows of one session card, oldest first as in `history list`: each request group's root, its request, and its
 * other commits nested under it. A root the list does not hold is shown greyed as context (from the answer's
 * `roots`), or named when even that is missing.
 */
function groupedRows(entries: Summary[], roots: Map<string, Summary>, heading: string, words: string[]): HTMLElement[] {
  const groups = new Map<string, Summary[]>();
  // the list comes newest first; its reverse is commit order, even for commits within one second
  for (const e of [...entries].reverse()) {
    const list = groups.get(e.groupId);
    if (list) list.push(e);
    else groups.set(e.groupId, [e]);
  }
  const rows: HTMLElement[] = [];
  for (const [groupId, members] of groups) {
    const root = members.find((e) => e.commitHash === groupId);
    const context = root ? undefined : roots.get(groupId);
    if (root) rows.push(entryRow(root));
    else if (context) rows.push(entryRow(context, { context: true }));
    else rows.push(h("p", { class: "context-note muted" }, "Part of the request started in ", h("a", { href: `#/entry/${groupId}` }, shortHash(groupId))));
    const request = (root ?? context)?.request?.trim();
    // the session's first request already heads the card (each side may be cut short at its own length)
    const heads = heading !== "" && (heading.startsWith(request ?? "") || (request ?? "").startsWith(heading));
    if (request && !heads) rows.push(requestLine(request));
    if (root?.match) rows.push(matchLine(root.match, words));
    for (const e of members) {
      if (e === root) continue;
      rows.push(entryRow(e, { member: true }));
      if (e.match) rows.push(matchLine(e.match, words));
    }
  }
  return rows;
}

/** The /clear link both ways: the session this one continues, and the sessions that continue it. */
function clearLinks(from: string | undefined, into: string[]): HTMLElement | null {
  if (!from && into.length === 0) return null;
  const link = (id: string) => h("a", { href: `#/session/${encodeURIComponent(id)}`, class: "session-link" }, id);
  return h(
    "p",
    { class: "clear-links" },
    from ? h("span", null, "↪ continues ", link(from), " after /clear") : null,
    into.map((id) => h("span", null, "↪ continued after /clear in ", link(id))),
  );
}

function sessionCard(id: string, info: SessionHeading | undefined, entries: Summary[], roots: Map<string, Summary>, continuedIn: string[], words: string[]): HTMLElement {
  const start = info ? new Date(info.start) : entryTime(entries.at(-1)!);
  const end = info ? new Date(info.end) : entryTime(entries[0]!);
  const range = dayKey(start) === dayKey(end) ? `${timeLabel(start)}–${timeLabel(end)}` : `${dayLabel(start)} ${timeLabel(start)} – ${dayLabel(end)} ${timeLabel(end)}`;
  const commits = info?.commits ?? entries.length;
  const heading = info?.firstRequest?.trim() || "";
  const from = entries.find((e) => e.continuedFrom)?.continuedFrom ?? undefined;
  return h(
    "section",
    { class: "card session-card", data: { session: id } },
    h(
      "header",
      { class: "card-head" },
      // elementtiming: when the card's heading is painted, for the browser's Element Timing (the first-card benchmark)
      h(
        "a",
        { class: "request", href: `#/session/${encodeURIComponent(id)}`, title: "Open the whole session", attrs: { elementtiming: "session-card" } },
        heading || "(no request recorded)",
      ),
      h(
        "div",
        { class: "meta" },
        h("span", null, agentLabel(info?.agentType ?? entries[0]!.agentType)),
        sessionPerson(entries),
        h("span", { class: "branch" }, info?.branch ?? entries[0]!.branch),
        h("span", null, range),
        h("span", null, plural(commits, "commit", "commits")),
        h("code", { class: "session-id", title: "Session id" }, id),
        h("a", { href: `#/?session=${encodeURIComponent(id)}`, class: "filter-link" }, "only this session"),
      ),
      clearLinks(from, continuedIn),
    ),
    h("div", { class: "rows" }, groupedRows(entries, roots, heading, words)),
  );
}

/**
 * One card per session, however its commits interleave with other sessions', ordered by its latest activity;
 * a day heading before the first card whose latest activity falls on that day.
 */
function renderEntries(entries: Summary[], sessions: Record<string, SessionHeading>, roots: Map<string, Summary>, words: string[]): Child[] {
  const bySession = new Map<string, Summary[]>();
  for (const e of entries) {
    const list = bySession.get(e.claudeSessionId);
    if (list) list.push(e);
    else bySession.set(e.claudeSessionId, [e]);
  }
  const continuedIn = new Map<string, string[]>();
  for (const [id, list] of bySession) {
    const from = list.find((e) => e.continuedFrom)?.continuedFrom;
    if (from && from !== id) continuedIn.set(from, [...(continuedIn.get(from) ?? []), id]);
  }
  const out: Child[] = [];
  let day = "";
  for (const [id, list] of bySession) {
    const latest = entryTime(list[0]!);
    const key = dayKey(latest);
    if (key !== day) {
      day = key;
      out.push(h("h2", { class: "day" }, dayLabel(latest)));
    }
    out.push(sessionCard(id, sessions[id], list, roots, continuedIn.get(id) ?? [], words));
  }
  return out;
}

/** A filter's field under its label. */
function labelled(name: string, label: string, field: HTMLElement): HTMLElement {
  return h("label", { class: `field field-${name}` }, h("span", null, label), field);
}

/** Whether this page has made a date field yet (see `dateField`). */
let dateFieldsMade = false;
/** What a date field holds, and a text field standing in for one accepts. */
const DATE_PATTERN = "\\d{4}-\\d{2}-\\d{2}";

/**
 * A date filter's field. A fresh page takes Chromium 10–30 ms to make its first date field (its date editor), ahead of
 * the first card, so the page's first form starts with a text field holding what a date field would hold (a
 * `YYYY-MM-DD` date, else nothing) and `dateFieldsLater` makes it a date field once the first page is painted; the
 * forms after it have date fields from the start.
 */
function dateField(name: "since" | "until", label: string, value: string | undefined): HTMLElement {
  const date = value && new RegExp(`^${DATE_PATTERN}$`).test(value) ? value : "";
  const attrs: Record<string, string> = dateFieldsMade
    ? { name, type: "date", value: date, autocomplete: "off" }
    : { name, type: "text", value: date, placeholder: "YYYY-MM-DD", pattern: DATE_PATTERN, autocomplete: "off" };
  return labelled(name, label, h("input", { data: { date: "" }, attrs }));
}

/** Makes the form's date filters date fields, after the next frame is painted (the page's first form only). */
function dateFieldsLater(form: HTMLFormElement): void {
  if (dateFieldsMade) return;
  dateFieldsMade = true;
  requestAnimationFrame(() =>
    setTimeout(() => {
      for (const field of form.querySelectorAll<HTMLInputElement>("input[data-date]")) {
        field.removeAttribute("placeholder");
        field.removeAttribute("pattern");
        field.type = "date";
      }
    }, 0),
  );
}

function filterForm(filters: Filters): HTMLFormElement {
  const input = (name: keyof Filters, label: string, placeholder = "") =>
    labelled(name, label, h("input", { attrs: { name, type: "text", value: filters[name] ?? "", placeholder, autocomplete: "off" } }));
  const tagSelect = h(
    "select",
    { attrs: { name: "tag" } },
    h("option", { attrs: { value: "" } }, "All tags"),
    TAGS.map((t) => {
      const o = h("option", { attrs: { value: t } }, t);
      if (filters.tag === t) o.selected = true;
      return o;
    }),
  );
  const others = FILTER_KEYS.filter((k) => k !== "q" && filters[k]).length;
  // on a phone the filters other than the search fold behind a button, so the first screen shows entries
  const toggle = h("button", { class: "filters-toggle", attrs: { type: "button", "aria-expanded": "false", "aria-controls": "more-filters" } }, others ? `Filters · ${others}` : "Filters");
  const form = h(
    "form",
    { class: "filters", role: "search" },
    h(
      "div",
      { class: "search-row" },
      labelled("q", "Search", h("input", { id: "search", attrs: { name: "q", type: "search", value: filters.q ?? "", placeholder: "Search titles, intent, prompts  ( / )", autocomplete: "off" } })),
      toggle,
    ),
    h(
      "div",
      { class: "more-filters", id: "more-filters" },
      h("label", { class: "field" }, h("span", null, "Tag"), tagSelect),
      input("session", "Session", "id or prefix"),
      input("author", "Person", "name or email"),
      input("file", "File or directory", "src/…"),
      input("branch", "Branch"),
      dateField("since", "From", filters.since),
      dateField("until", "To", filters.until),
      h("div", { class: "actions" }, h("button", { attrs: { type: "submit" } }, "Apply"), h("a", { href: "#/", class: "clear" }, "Clear")),
    ),
  );
  toggle.addEventListener("click", () => {
    const open = form.classList.toggle("open");
    toggle.setAttribute("aria-expanded", String(open));
  });
  form.addEventListener("submit", (ev) => {
    ev.preventDefault();
    const q = new URLSearchParams();
    for (const [k, v] of new FormData(form)) if (typeof v === "string" && v.trim()) q.set(k, v.trim());
    location.hash = `#/${q.size ? `?${q}` : ""}`;
  });
  tagSelect.addEventListener("change", () => form.requestSubmit());
  return form;
}

function readFilters(params: URLSearchParams): Filters {
  const filters: Filters = {};
  for (const k of FILTER_KEYS) {
    const v = params.get(k);
    if (v) filters[k] = v;
  }
  return filters;
}

/** The read URL of the timeline's first page for `params`, as `timelineView` asks for it. */
export function firstTimelineRead(params: URLSearchParams): string {
  return readUrl("timeline", { ...readFilters(params), limit: String(PAGE) });
}

/** Renders the timeline for `params` into `main`; resolves after the first page is on screen. */
export async function timelineView(main: HTMLElement, params: URLSearchParams): Promise<void> {
  const filters = readFilters(params);
  const list = h("div", { class: "timeline", attrs: { "aria-live": "polite" } });
  const status = h("p", { class: "status muted" });
  const more = h("button", { class: "more", attrs: { type: "button" } }, "Load more");
  const active = Object.keys(filters).length > 0;
  const form = filterForm(filters);
  mount(main, form, status, list, more);
  const entries: Summary[] = [];
  const sessions: Record<string, SessionHeading> = {};
  const roots = new Map<string, Summary>();
  const words = searchWords(filters.q ?? "");
  let cursor: string | null = null;
  let loading = false;
  const load = async () => {
    if (loading) return;
    loading = true;
    more.disabled = true;
    try {
      const page = await get<TimelinePage>("timeline", { ...filters, limit: String(PAGE), cursor: cursor ?? undefined });
      entries.push(...page.entries);
      Object.assign(sessions, page.sessions);
      for (const r of page.roots ?? []) roots.set(r.commitHash, r);
      cursor = page.nextCursor;
      mount(list, renderEntries(entries, sessions, roots, words));
      status.textContent =
        entries.length === 0
          ? active
            ? "No entries match these filters."
            : "No entries yet. They are recorded when a coding agent commits in this repository."
          : `${entries.length} ${entries.length === 1 ? "entry" : "entries"}${cursor ? " so far" : ""}${active ? " matching" : ""}`;
      more.hidden = !cursor;
      status.classList.remove("error");
    } catch (err) {
      if (err instanceof Unauthorized || entries.length === 0 && !active) throw err;
      // a filter the server cannot read: say why and keep the form to fix it
      status.textContent = err instanceof Error ? err.message : String(err);
      status.classList.add("error");
      more.hidden = true;
    } finally {
      loading = false;
      more.disabled = false;
    }
  };
  more.addEventListener("click", () => void load());
  await load();
  dateFieldsLater(form);
  // Incremental loading: the next page comes when the end of the list scrolls into view.
  if ("IntersectionObserver" in window) {
    const io = new IntersectionObserver((items) => {
      if (!more.isConnected) io.disconnect();
      else if (items.some((i) => i.isIntersecting) && cursor) void load();
    });
    io.observe(more);
  }
}
