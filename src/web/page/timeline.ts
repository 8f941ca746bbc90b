/** The timeline: days, session cards, request groups nested under their root; filters live in the URL. */
import { Unauthorized, get, type SessionHeading, type Summary, type TimelinePage } from "./api.ts";
import { h, mount, type Child } from "./dom.ts";
import { sessionPerson } from "./people.ts";
import { TAGS, agentLabel, dateTimeLabel, dayKey, dayLabel, entryTime, isPending, pendingBadge, shortHash, tagBadge, timeLabel } from "./format.ts";

/** The filter keys the URL holds (`#/?tag=BUGFIX&q=…`), in the order the form shows them. */
export const FILTER_KEYS = ["q", "tag", "session", "author", "file", "branch", "since", "until"] as const;
type Filters = Partial<Record<(typeof FILTER_KEYS)[number], string>>;

const PAGE = 50;

/** One entry as a row: short hash, tag badge, title, time; members of a group start with └. */
export function entryRow(e: Summary, opts: { member?: boolean; showDate?: boolean } = {}): HTMLElement {
  const t = entryTime(e);
  return h(
    "a",
    { class: `entry-row${opts.member ? " member" : ""}`, href: `#/entry/${e.commitHash}`, data: { hash: e.commitHash } },
    opts.member ? h("span", { class: "branch-mark", attrs: { "aria-hidden": "true" } }, "└") : null,
    h("code", { class: "hash" }, shortHash(e.commitHash)),
    tagBadge(e.tag),
    h("span", { class: "title" }, e.title || "(untitled)"),
    isPending(e) ? pendingBadge() : null,
    h("time", { class: "when", attrs: { datetime: t.toISOString() } }, opts.showDate ? dateTimeLabel(t) : timeLabel(t)),
  );
}

/** Rows of one session card: each request group's root first, its other commits nested under it. */
function groupedRows(entries: Summary[]): HTMLElement[] {
  const groups = new Map<string, Summary[]>();
  for (const e of entries) {
    const list = groups.get(e.groupId);
    if (list) list.push(e);
    else groups.set(e.groupId, [e]);
  }
  const rows: HTMLElement[] = [];
  for (const [groupId, members] of groups) {
    // the page comes newest first; its reverse is commit order, even for commits within one second
    const ordered = [...members].reverse();
    const root = ordered.find((e) => e.commitHash === groupId);
    if (root) rows.push(entryRow(root));
    for (const e of ordered) if (e !== root) rows.push(entryRow(e, { member: true }));
  }
  return rows;
}

function sessionCard(id: string, info: SessionHeading | undefined, entries: Summary[]): HTMLElement {
  const start = info ? new Date(info.start) : entryTime(entries.at(-1)!);
  const end = info ? new Date(info.end) : entryTime(entries[0]!);
  const range = dayKey(start) === dayKey(end) ? `${timeLabel(start)}–${timeLabel(end)}` : `${dayLabel(start)} ${timeLabel(start)} – ${dayLabel(end)} ${timeLabel(end)}`;
  const commits = info?.commits ?? entries.length;
  return h(
    "section",
    { class: "card session-card", data: { session: id } },
    h(
      "header",
      { class: "card-head" },
      h("a", { class: "request", href: `#/session/${encodeURIComponent(id)}`, title: "Open the whole session" }, info?.firstRequest?.trim() || "(no request recorded)"),
      h(
        "div",
        { class: "meta" },
        h("span", null, agentLabel(info?.agentType ?? entries[0]!.agentType)),
        sessionPerson(entries),
        h("span", { class: "branch" }, info?.branch ?? entries[0]!.branch),
        h("span", null, range),
        h("span", null, `${commits} ${commits === 1 ? "commit" : "commits"}`),
        h("a", { href: `#/?session=${encodeURIComponent(id)}`, class: "filter-link" }, "only this session"),
      ),
    ),
    h("div", { class: "rows" }, groupedRows(entries)),
  );
}

/** Days, and within a day a card for each run of entries from one session. */
function renderEntries(entries: Summary[], sessions: Record<string, SessionHeading>): Child[] {
  const out: Child[] = [];
  let day = "";
  let run: Summary[] = [];
  const flush = () => {
    if (run.length) out.push(sessionCard(run[0]!.claudeSessionId, sessions[run[0]!.claudeSessionId], run));
    run = [];
  };
  for (const e of entries) {
    const d = entryTime(e);
    const key = dayKey(d);
    if (key !== day) {
      flush();
      day = key;
      out.push(h("h2", { class: "day" }, dayLabel(d)));
    } else if (run.length && run[0]!.claudeSessionId !== e.claudeSessionId) flush();
    run.push(e);
  }
  flush();
  return out;
}

function filterForm(filters: Filters): HTMLFormElement {
  const input = (name: keyof Filters, label: string, type = "text", placeholder = "") =>
    h("label", { class: `field field-${name}` }, h("span", null, label), h("input", { attrs: { name, type, value: filters[name] ?? "", placeholder, autocomplete: "off" } }));
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
  const form = h(
    "form",
    { class: "filters", role: "search" },
    h("label", { class: "field field-q" }, h("span", null, "Search"), h("input", { id: "search", attrs: { name: "q", type: "search", value: filters.q ?? "", placeholder: "Search titles, intent, prompts  ( / )", autocomplete: "off" } })),
    h("label", { class: "field" }, h("span", null, "Tag"), tagSelect),
    input("session", "Session", "text", "id or prefix"),
    input("author", "Person", "text", "name or email"),
    input("file", "File or directory", "text", "src/…"),
    input("branch", "Branch"),
    input("since", "From", "date"),
    input("until", "To", "date"),
    h("div", { class: "actions" }, h("button", { attrs: { type: "submit" } }, "Apply"), h("a", { href: "#/", class: "clear" }, "Clear")),
  );
  form.addEventListener("submit", (ev) => {
    ev.preventDefault();
    const q = new URLSearchParams();
    for (const [k, v] of new FormData(form)) if (typeof v === "string" && v.trim()) q.set(k, v.trim());
    location.hash = `#/${q.size ? `?${q}` : ""}`;
  });
  tagSelect.addEventListener("change", () => form.requestSubmit());
  return form;
}

/** Renders the timeline for `params` into `main`; resolves after the first page is on screen. */
export async function timelineView(main: HTMLElement, params: URLSearchParams): Promise<void> {
  const filters: Filters = {};
  for (const k of FILTER_KEYS) {
    const v = params.get(k);
    if (v) filters[k] = v;
  }
  const list = h("div", { class: "timeline", attrs: { "aria-live": "polite" } });
  const status = h("p", { class: "status muted" });
  const more = h("button", { class: "more", attrs: { type: "button" } }, "Load more");
  const active = Object.keys(filters).length > 0;
  mount(main, filterForm(filters), status, list, more);
  const entries: Summary[] = [];
  const sessions: Record<string, SessionHeading> = {};
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
      cursor = page.nextCursor;
      mount(list, renderEntries(entries, sessions));
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
  // Incremental loading: the next page comes when the end of the list scrolls into view.
  if ("IntersectionObserver" in window) {
    const io = new IntersectionObserver((items) => {
      if (!more.isConnected) io.disconnect();
      else if (items.some((i) => i.isIntersecting) && cursor) void load();
    });
    io.observe(more);
  }
}
