/**
 * The dashboard page: a hash router over the screens, the sign-in form (team mode), the project picker and the
 * keyboard. Every route re-renders `#main` from the read API.
 */
import { MODE, NotFound, Unauthorized, finishSignIn, get, keepSession, post, prefetch, setProject, currentProject, type Project } from "./api.ts";
import { h, mount } from "./dom.ts";
import { entryView } from "./entry.ts";
import { fileView } from "./file.ts";
import { overviewView } from "./overview.ts";
import { sessionView } from "./session.ts";
import { firstTimelineRead, timelineView } from "./timeline.ts";

const main = document.getElementById("main") as HTMLElement;
const projectSlot = document.getElementById("project") as HTMLElement;
let firstRender = true;
let renderSeq = 0;

function parseRoute(): { path: string; params: URLSearchParams } {
  const raw = location.hash.replace(/^#/, "") || "/";
  const q = raw.indexOf("?");
  return { path: q < 0 ? raw : raw.slice(0, q), params: new URLSearchParams(q < 0 ? "" : raw.slice(q + 1)) };
}

function markNav(path: string): void {
  const section = path.startsWith("/overview") ? "overview" : path === "/" ? "timeline" : "";
  for (const a of document.querySelectorAll<HTMLAnchorElement>("[data-nav]")) a.classList.toggle("active", a.dataset.nav === section);
}

async function render(): Promise<void> {
  const seq = ++renderSeq;
  const { path, params } = parseRoute();
  markNav(path);
  document.title = "aiflare";
  try {
    if (path === "/" || path === "") await timelineView(main, params);
    else if (path.startsWith("/entry/")) await entryView(main, decodeURIComponent(path.slice(7)));
    else if (path.startsWith("/session/")) await sessionView(main, decodeURIComponent(path.slice(9)));
    else if (path === "/file") await fileView(main, params.get("path") ?? "");
    else if (path === "/overview") await overviewView(main, params);
    else throw new NotFound(`there is no page ${path}`);
  } catch (err) {
    if (seq !== renderSeq) return;
    if (err instanceof Unauthorized) {
      keepSession(null);
      if (MODE === "team") signIn(err.message);
      else
        mount(
          main,
          h("h1", null, "This dashboard needs its link"),
          h("p", null, "Open the URL that ", h("code", null, "aiflare ui"), " printed in the terminal: it carries this run's token."),
        );
    } else if (err instanceof NotFound) {
      document.title = "Not found · aiflare";
      mount(main, h("h1", null, "Not found"), h("p", { class: "not-found" }, sentence(err.message)), h("p", null, h("a", { href: "#/" }, "Back to the timeline")));
    } else {
      mount(main, h("h1", null, "Something went wrong"), h("p", { class: "error" }, err instanceof Error ? err.message : String(err)));
    }
  }
  if (seq === renderSeq) document.body.dataset.route = location.hash || "#/";
  if (firstRender && seq === renderSeq) {
    firstRender = false;
    performance.mark("aiflare:first-render");
    document.body.dataset.ready = "1";
  }
  selected = -1;
}

/** A server's message as a sentence: capital first letter, full stop. */
function sentence(text: string): string {
  const t = text.trim();
  return `${t.charAt(0).toUpperCase()}${t.slice(1)}${/[.!?]$/.test(t) ? "" : "."}`;
}

/** The sign-in form: a project key (or read key) is exchanged for a session (an HttpOnly cookie, or see api.ts). */
function signIn(message?: string): void {
  const key = h("input", { id: "key", attrs: { type: "password", name: "key", autocomplete: "current-password", required: "" } });
  const error = h("p", { class: "error", role: "alert" });
  const form = h(
    "form",
    { class: "signin card" },
    h("h1", null, "Sign in"),
    h("p", { class: "muted" }, "Enter a project key (or a read key) for this server."),
    h("label", { class: "field" }, h("span", null, "Key"), key),
    h("button", { attrs: { type: "submit" } }, "Sign in"),
    error,
  );
  if (message && !/unauth|sign in|missing|required/i.test(message)) error.textContent = message;
  form.addEventListener("submit", async (ev) => {
    ev.preventDefault();
    error.textContent = "";
    try {
      const r = await post<{ projects: Project[]; session?: string }>("auth/login", { key: key.value });
      keepSession(r.session);
      showProjects(r.projects);
      await render();
    } catch (err) {
      error.textContent = err instanceof Unauthorized ? "That key was not accepted." : String(err instanceof Error ? err.message : err);
    }
  });
  mount(main, form);
  key.focus();
}

/** The project picker (team mode): shown when the signed-in keys reach several projects. */
function showProjects(projects: Project[]): void {
  const saved = sessionStorage.getItem("aiflare.project");
  const chosen = projects.find((p) => p.id === saved) ?? projects[0];
  setProject(projects.length > 1 && chosen ? chosen.id : null);
  if (projects.length <= 1) {
    mount(projectSlot, chosen ? chosen.name : "", h("button", { class: "link", attrs: { type: "button" }, on: { click: () => void signOut() } }, "Sign out"));
    return;
  }
  const select = h(
    "select",
    { attrs: { "aria-label": "Project" } },
    projects.map((p) => {
      const o = h("option", { attrs: { value: p.id } }, p.name);
      if (p.id === currentProject()) o.selected = true;
      return o;
    }),
  );
  select.addEventListener("change", () => {
    setProject(select.value);
    sessionStorage.setItem("aiflare.project", select.value);
    void render();
  });
  mount(projectSlot, select, h("button", { class: "link", attrs: { type: "button" }, on: { click: () => void signOut() } }, "Sign out"));
}

async function signOut(): Promise<void> {
  try {
    await post("auth/logout", {});
  } finally {
    keepSession(null);
    mount(projectSlot);
    signIn();
  }
}

// Keyboard: j/k or arrows move through entries, Enter opens, / searches.
let selected = -1;
function rows(): HTMLElement[] {
  return [...main.querySelectorAll<HTMLElement>(".entry-row, .cut")];
}
function select(i: number): void {
  const list = rows();
  if (!list.length) return;
  selected = Math.max(0, Math.min(list.length - 1, i));
  for (const r of list) r.classList.remove("selected");
  const el = list[selected]!;
  el.classList.add("selected");
  el.focus({ preventScroll: true });
  el.scrollIntoView({ block: "nearest" });
}
document.addEventListener("keydown", (ev) => {
  const t = ev.target as HTMLElement;
  const typing = t.closest("input, textarea, select");
  if (typing) {
    if (ev.key === "Escape") (t as HTMLElement).blur();
    return;
  }
  if (ev.metaKey || ev.ctrlKey || ev.altKey) return;
  if (ev.key === "/") {
    ev.preventDefault();
    const search = document.getElementById("search");
    if (search) search.focus();
    else location.hash = "#/";
  } else if (ev.key === "j" || ev.key === "ArrowDown") {
    ev.preventDefault();
    select(selected + 1);
  } else if (ev.key === "k" || ev.key === "ArrowUp") {
    ev.preventDefault();
    select(selected - 1);
  } else if (ev.key === "Enter" && selected >= 0 && !t.closest("a, button")) {
    rows()[selected]?.click();
  }
});

window.addEventListener("hashchange", () => {
  window.scrollTo(0, 0);
  void render();
});

/** The read URL of the first screen's data when it is the timeline (the screen nearly every visit opens with). */
function firstRead(): string | undefined {
  const { path, params } = parseRoute();
  return path === "/" || path === "" ? firstTimelineRead(params) : undefined;
}

async function start(): Promise<void> {
  // the token leaves the address for the timeline, whose first page comes with the session
  if (MODE === "local") await finishSignIn();
  if (MODE === "team") {
    // the first page is read while the sign-in is checked; it is used if the project it was read for is the one chosen
    const saved = sessionStorage.getItem("aiflare.project");
    setProject(saved);
    const first = firstRead();
    if (first) prefetch(first);
    setProject(null);
    try {
      const me = await get<{ projects: Project[] }>("auth/me");
      showProjects(me.projects);
    } catch (err) {
      if (err instanceof Unauthorized) {
        keepSession(null);
        signIn();
        document.body.dataset.ready = "1";
        return;
      }
      throw err;
    }
  }
  await render();
}
void start();
