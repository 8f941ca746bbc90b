/**
 * The dashboard tells the truth, the same in `aiflare ui` and `aiflare serve`: sessions that overlap in time stay
 * one card each, the overview counts only its window, the timeline shows what the terminal shows, and the page
 * reads on a phone. Real binary, real git and hooks, real headless Chromium.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { join } from "node:path";
import type { Browser, Page } from "playwright-core";
import { rmSync } from "node:fs";
import { runBin, tempRepo, type TempRepo } from "../helpers.ts";
import { writeConfig } from "../sync-fixtures.ts";
import { convo, makeEntry, writeTimeline } from "../timeline-fixture.ts";
import { launchBrowser, showRoute, signInTeam, startServe, startUi, storyCommits, type RunningServe, type RunningUi } from "../dashboard-support.ts";
import { session } from "./capture-support.ts";

setDefaultTimeout(90_000);

// Functions passed to page.evaluate run in the page; the test's own type world has no DOM.
declare const document: any, location: any, window: any;

let browser: Browser;
const cleanups: (() => Promise<void> | void)[] = [];

beforeAll(async () => {
  browser = await launchBrowser();
});

afterAll(async () => {
  for (const c of cleanups.reverse()) await c();
  await browser?.close();
});

/** A repository served both ways: `aiflare ui` on it, and `aiflare serve` holding the same entries. */
interface BothWays {
  repo: TempRepo;
  ui: RunningUi;
  serve: RunningServe;
}

async function bothWays(repo: TempRepo, push: (serve: RunningServe) => Promise<void>): Promise<BothWays> {
  const ui = await startUi(repo.root, repo.env);
  const serve = await startServe(join(repo.dir, "team.sqlite"), repo.home, repo.env);
  cleanups.push(() => repo.cleanup(), () => ui.stop(), () => serve.stop());
  await push(serve);
  return { repo, ui, serve };
}

/** Posts entries to the team server as `aiflare sync` would. */
async function postEntries(serve: RunningServe, captures: unknown[]): Promise<void> {
  const res = await fetch(`${serve.origin}/api/v1/captures/batch`, {
    method: "POST",
    headers: { "Content-Type": "application/json", "X-API-Key": serve.key },
    body: JSON.stringify({ captures }),
  });
  if (res.status !== 200) throw new Error(`batch refused: ${res.status} ${await res.text()}`);
}

/** A page on `aiflare ui` (local) or on `aiflare serve` (team, signed in), at `route`, once `ready` shows. */
async function open(where: BothWays, mode: "local" | "team", route: string, ready: string, viewport = { width: 1280, height: 860 }): Promise<Page> {
  const ctx = await browser.newContext({ viewport, ...(viewport.width < 500 ? { isMobile: true } : {}) });
  cleanups.push(() => ctx.close());
  const page = await ctx.newPage();
  if (mode === "local") await page.goto(where.ui.url);
  else await signInTeam(page, where.serve.origin, where.serve.key);
  await page.waitForSelector("body[data-ready='1']");
  await showRoute(page, route, ready);
  return page;
}

/** Pushes the repository's timeline to the team server with `aiflare sync --all`. */
async function syncAll(repo: TempRepo, serve: RunningServe): Promise<void> {
  writeConfig(repo.root, serve.origin, serve.key);
  try {
    const r = await runBin(["sync", "--all"], { cwd: repo.root, env: repo.env });
    if (r.code !== 0) throw new Error(`sync failed: ${r.stderr}`);
  } finally {
    rmSync(join(repo.root, "aiflare.yml"), { force: true });
  }
}

/** What a person sees of each session card: its heading, its meta line, and its lines in order. */
function cards(p: Page) {
  return p.$$eval(".session-card", (cs) =>
    cs.map((c) => ({
      request: c.querySelector(".request")?.textContent ?? "",
      meta: c.querySelector(".meta")?.textContent ?? "",
      links: c.querySelector(".clear-links")?.textContent ?? "",
      lines: [...c.querySelectorAll(".rows > *")].map((r) => {
        const title = r.querySelector(".title")?.textContent;
        if (r.classList.contains("context-row")) return `(context) ${title}`;
        if (r.classList.contains("entry-row")) {
          const mark = r.classList.contains("member") ? "└ " : "";
          const cont = r.querySelector(".continued") ? " [after question]" : "";
          return `${mark}${title}${cont}`;
        }
        return (r.textContent ?? "").trim();
      }),
    })),
  );
}

const DAY = 86_400_000;

describe("overview: every number uses the chosen window, the same in both modes", () => {
  let world: BothWays;
  const today = Date.UTC(new Date().getUTCFullYear(), new Date().getUTCMonth(), new Date().getUTCDate());
  const at = (daysAgo: number, hour = 9) => new Date(today - daysAgo * DAY + hour * 3_600_000).toISOString();
  const entries = [
    makeEntry({ commitHash: "a".repeat(40), tag: "DOCS", claudeSessionId: "old-1", committedAt: at(40), capturedAt: at(40), changedFiles: ["old.md"] }),
    makeEntry({ commitHash: "b".repeat(40), tag: "TEST", claudeSessionId: "s-3", committedAt: at(10), capturedAt: at(10), changedFiles: ["t.ts"] }),
    makeEntry({ commitHash: "c".repeat(40), tag: "BUGFIX", claudeSessionId: "s-2", committedAt: at(3), capturedAt: at(3), changedFiles: ["a.ts"] }),
    makeEntry({ commitHash: "d".repeat(40), tag: "FEATURE", claudeSessionId: "s-1", committedAt: at(0, 0), capturedAt: at(0, 0), changedFiles: ["a.ts"] }),
    makeEntry({ commitHash: "e".repeat(40), tag: "FEATURE", claudeSessionId: "s-1", committedAt: at(0, 0), capturedAt: at(0, 0), changedFiles: ["b.ts"] }),
  ];

  beforeAll(async () => {
    const repo = tempRepo();
    writeTimeline(repo.root, repo.env, { entries });
    world = await bothWays(repo, (serve) => postEntries(serve, entries));
  });

  const read = (p: Page) =>
    p.evaluate(() => ({
      heading: document.querySelector("main h1")?.textContent,
      figures: document.querySelector(".figures")?.textContent,
      days: [...document.querySelectorAll("[aria-label='Entries per day'] rect")].map((r: any) => Number(r.getAttribute("height"))),
      tags: [...document.querySelectorAll("[aria-label='Entries per tag'] li")].map((l: any) => l.textContent),
      files: [...document.querySelectorAll(".top-files li")].map((l: any) => l.textContent),
    }));

  for (const mode of ["local", "team"] as const) {
    test(`${mode}: the last 28 days count only their entries; empty days are zero bars`, async () => {
      const p = await open(world, mode, "#/overview", ".figures");
      const seen = await read(p);
      expect(seen.heading).toBe("The last 28 days");
      expect(seen.figures).toContain("4 entries");
      expect(seen.figures).toContain("3 sessions");
      expect(seen.tags).toEqual(["FEATURE2", "BUGFIX1", "REFACTORING0", "TEST1", "DOCS0"]);
      expect(seen.days).toHaveLength(28);
      expect(seen.days.filter((h) => h > 0)).toHaveLength(3);
      expect(seen.days.at(-1)).toBe(Math.max(...seen.days));
      expect(seen.files.some((f: string) => f.includes("old.md"))).toBe(false);
      // a wider window takes the older entry in, everywhere on the page
      await p.click("text=90 days");
      await p.waitForFunction(() => document.querySelector("main h1")?.textContent === "The last 90 days");
      const wide = await read(p);
      expect(wide.figures).toContain("5 entries");
      expect(wide.figures).toContain("4 sessions");
      expect(wide.tags).toContain("DOCS1");
      expect(wide.days).toHaveLength(90);
      expect(wide.files.some((f: string) => f.includes("old.md"))).toBe(true);
    });
  }

  test("both modes show the same page for the same data", async () => {
    const local = await read(await open(world, "local", "#/overview?days=28", ".figures"));
    const team = await read(await open(world, "team", "#/overview?days=28", ".figures"));
    expect(team).toEqual(local);
  });

  test("on a phone the chart labels are as large as the page's text", async () => {
    const p = await open(world, "local", "#/overview", ".figures", { width: 390, height: 844 });
    const sizes = await p.evaluate(() => {
      const heightOf = (scope: string, text: string) => {
        const el = [...document.querySelectorAll(`${scope} *`)].find((e: any) => e.children.length === 0 && e.textContent === text);
        return el ? el.getBoundingClientRect().height : 0;
      };
      return { tag: heightOf("[aria-label='Entries per tag']", "FEATURE"), count: heightOf("[aria-label='Entries per tag']", "2") };
    });
    expect(sizes.tag).toBeGreaterThanOrEqual(11);
    expect(sizes.count).toBeGreaterThanOrEqual(11);
    expect(await p.evaluate(() => document.documentElement.scrollWidth - window.innerWidth)).toBeLessThanOrEqual(0);
  });
});

describe("timeline: two sessions committing alternately stay one card each", () => {
  let world: BothWays;
  const hashes: Record<string, string> = {};

  beforeAll(async () => {
    const repo = tempRepo();
    const commit = storyCommits(repo);
    const ok = (r: { code: number; stderr: string }) => {
      if (r.code !== 0) throw new Error(r.stderr);
    };
    const left = session(repo, "sess-left-0001");
    const right = session(repo, "sess-right-0002");
    const step = async (who: typeof left, key: string, message: string, file: string) => {
      const c = commit(message, { [file]: `${key}\n` });
      hashes[key] = c.hash;
      ok(await who.bash(`git commit -am "${message}"`, c.stdout));
    };
    await left.prompt("Make the importer stream rows");
    await step(left, "L1", "feat: stream importer rows", "src/importer.ts");
    await right.prompt("Tidy the settings page");
    await step(right, "R1", "refactor: settings layout", "src/settings.ts");
    await step(left, "L2", "test: importer streaming", "test/importer.test.ts");
    await step(right, "R2", "refactor: settings labels", "src/labels.ts");
    await left.stop("Streaming **works**. Should empty rows be skipped?");
    ok(await left.ask());
    await left.prompt("Yes, skip them");
    await step(left, "L3", "feat: skip empty rows", "src/importer-skip.ts");
    await right.prompt("Also add a dark mode toggle");
    await step(right, "R3", "feat: dark mode toggle", "src/theme.ts");
    delete repo.env.GIT_COMMITTER_DATE;
    delete repo.env.GIT_AUTHOR_DATE;
    world = await bothWays(repo, (serve) => syncAll(repo, serve));
  });

  for (const mode of ["local", "team"] as const) {
    test(`${mode}: one card per session, newest activity first, each request group under its root`, async () => {
      const p = await open(world, mode, "#/", ".session-card");
      const seen = await cards(p);
      expect(seen.map((c) => c.request)).toEqual(["Tidy the settings page", "Make the importer stream rows"]);
      expect(seen[0]!.lines).toEqual([
        "refactor: settings layout",
        "└ refactor: settings labels",
        "feat: dark mode toggle",
        "💬 Also add a dark mode toggle",
      ]);
      expect(seen[1]!.lines).toEqual(["feat: stream importer rows", "└ test: importer streaming", "└ feat: skip empty rows [after question]"]);
      // the full session id, and the commit count of the whole session
      expect(seen[0]!.meta).toContain("sess-right-0002");
      expect(seen[1]!.meta).toContain("sess-left-0001");
      expect(seen[1]!.meta).toContain("3 commits");
      expect(await p.$$eval("h2.day", (d) => d.length)).toBe(1);
    });

    test(`${mode}: a commit whose root is outside the filter shows the root greyed as context`, async () => {
      const p = await open(world, mode, "#/?file=test/importer.test.ts", ".session-card");
      const seen = await cards(p);
      expect(seen).toHaveLength(1);
      expect(seen[0]!.lines).toEqual(["(context) feat: stream importer rows", "└ test: importer streaming"]);
      expect(await p.$$eval(".entry-row", (r) => r.length)).toBe(1);
      expect(await p.textContent(".status")).toBe("1 entry matching");
    });
  }

  for (const mode of ["local", "team"] as const) {
    test(`${mode}: search results show the matching words in context`, async () => {
      const p = await open(world, mode, "#/?q=skipped", ".session-card");
      const seen = await cards(p);
      expect(seen).toHaveLength(1);
      expect(seen[0]!.lines).toEqual([
        "(context) feat: stream importer rows",
        "└ feat: skip empty rows [after question]",
        "reply: Streaming **works**. Should empty rows be skipped?",
      ]);
      expect(await p.$$eval(".match-line mark", (m) => m.map((x) => x.textContent))).toEqual(["skipped"]);
    });

    test(`${mode}: an unknown commit is a page that says it is not found`, async () => {
      const p = await open(world, mode, "#/entry/0123456789abcdef", "main h1");
      expect(await p.textContent("main h1")).toBe("Not found");
      expect(await p.textContent("main")).toContain("No entry for commit 0123456789abcdef.");
      expect(await p.textContent("main")).not.toContain("Something went wrong");
      await open(world, mode, "#/entry/not-a-hash", "main h1").then(async (q) => expect(await q.textContent("main h1")).toBe("Not found"));
    });
  }

  for (const mode of ["local", "team"] as const) {
    test(`${mode}: on a phone the filters fold away and the first screen shows entries`, async () => {
      const p = await open(world, mode, "#/", ".session-card", { width: 375, height: 667 });
      const first = await p.evaluate(() => {
        const card = document.querySelector(".session-card").getBoundingClientRect();
        return { top: card.top, screen: window.innerHeight, overflow: document.documentElement.scrollWidth - window.innerWidth };
      });
      // the entries start in the top third of the first screen, under the search box
      expect(first.top).toBeLessThanOrEqual(first.screen / 3);
      expect(first.overflow).toBeLessThanOrEqual(0);
      expect(await p.isVisible("#search")).toBe(true);
      expect(await p.isVisible("select[name=tag]")).toBe(false);
      await p.click("button.filters-toggle");
      expect(await p.isVisible("select[name=tag]")).toBe(true);
      expect(await p.isVisible("input[name=file]")).toBe(true);
      // a filter chosen there is counted on the folded button
      await p.selectOption("select[name=tag]", "TEST");
      await p.waitForFunction(() => location.hash.includes("tag=TEST"));
      await p.waitForFunction(() => document.querySelector("button.filters-toggle")?.textContent === "Filters · 1");
      expect(await p.isVisible("select[name=tag]")).toBe(false);
    });
  }

  for (const mode of ["local", "team"] as const) {
    test(`${mode}: the session page is titled by its request, marks the question and answer, renders replies' Markdown`, async () => {
      const p = await open(world, mode, "#/session/sess-left-0001", ".transcript .turn");
      expect(await p.textContent("main h1")).toBe("Make the importer stream rows");
      expect(await p.title()).toBe("Make the importer stream rows · aiflare");
      const meta = await p.$$eval(".session-meta", (m) => m.map((x) => x.textContent).join(" "));
      expect(meta).toContain("3 commits");
      // the AskUserQuestion call asked four questions: each question and its answer is a turn of its own
      expect(meta).toContain("11 turns");
      expect(meta).toContain("sess-left-0001");
      const seq = await p.$$eval(".transcript > *", (els) =>
        els.map((e) => (e.classList.contains("cut") ? "commit" : e.querySelector(".turn-role")?.textContent)),
      );
      const qa = ["Agent's question", "Answer"];
      expect(seq).toEqual(["User", "commit", "commit", "Assistant", ...qa, ...qa, ...qa, ...qa, "User", "commit"]);
      expect(await p.$$eval(".transcript .turn strong", (s) => s.map((x) => x.textContent))).toEqual(["works"]);
      expect(await p.textContent(".transcript")).not.toContain("**works**");
    });
  }

  test("a page that ends inside a session carries the roots of its groups, in both modes", async () => {
    const local = await fetch(`${world.ui.origin}/api/v1/timeline?limit=2`, { headers: { Authorization: `Bearer ${world.ui.token}` } }).then((r) => r.json());
    const team = await fetch(`${world.serve.origin}/api/v1/timeline?limit=2`, { headers: { "X-API-Key": world.serve.key } }).then((r) => r.json());
    for (const answer of [local, team] as any[]) {
      expect(answer.entries.map((e: any) => e.commitHash)).toEqual([hashes.R3, hashes.L3]);
      expect(answer.roots.map((e: any) => e.commitHash)).toEqual([hashes.L1]);
      expect(answer.roots[0].request).toBe("Make the importer stream rows");
      expect(answer.entries[0].request).toBe("Also add a dark mode toggle");
    }
  });
});

describe("timeline: the /clear link between a cleared session and the one that continues it", () => {
  let world: BothWays;
  const entries = [
    makeEntry({ commitHash: "1".repeat(40), title: "Start the parser", claudeSessionId: "sess-before-clear", capturedAt: "2026-11-20T10:00:00.000Z", conversationSnippet: convo(["user", "Write a parser"]) }),
    {
      ...makeEntry({ commitHash: "2".repeat(40), title: "Finish the parser", claudeSessionId: "sess-after-clear", capturedAt: "2026-11-20T11:00:00.000Z", conversationSnippet: convo(["user", "Go on with the parser"]) }),
      continuedFrom: "sess-before-clear",
    },
  ];

  beforeAll(async () => {
    const repo = tempRepo();
    writeTimeline(repo.root, repo.env, { entries });
    world = await bothWays(repo, (serve) => postEntries(serve, entries));
  });

  for (const mode of ["local", "team"] as const) {
    test(`${mode}: each card links to the other by its full id`, async () => {
      const p = await open(world, mode, "#/", ".session-card");
      const seen = await cards(p);
      expect(seen.map((c) => c.request)).toEqual(["Go on with the parser", "Write a parser"]);
      expect(seen[0]!.links).toBe("↪ continues sess-before-clear after /clear");
      expect(seen[1]!.links).toBe("↪ continued after /clear in sess-after-clear");
      await p.click(".session-card:first-of-type .clear-links a");
      await p.waitForFunction(() => location.hash === "#/session/sess-before-clear");
      await p.waitForSelector(".transcript .turn");
      expect(await p.textContent("main h1")).toBe("Write a parser");
      const meta = await p.$$eval(".session-meta", (m) => m.map((x) => x.textContent).join(" "));
      expect(meta).toContain("1 turn · 1 commit ·");
    });
  }
});

describe("timeline: a card spans pages", () => {
  let world: BothWays;
  // two sessions committing alternately a minute apart, each one request answered by 30 commits: the first page
  // (the 50 newest) holds neither root
  const start = Date.UTC(2026, 10, 20, 9);
  const root = (s: number) => `${s}`.repeat(40);
  const entries = Array.from({ length: 60 }, (_, i) => {
    const s = i % 2;
    const n = Math.floor(i / 2);
    const at = new Date(start + i * 60_000).toISOString();
    return makeEntry({
      commitHash: n === 0 ? root(s + 1) : `${s + 1}${String(n).padStart(39, "0")}`,
      title: `${s ? "Right" : "Left"} step ${n}`,
      claudeSessionId: s ? "sess-right" : "sess-left",
      groupRootId: n === 0 ? null : root(s + 1),
      capturedAt: at,
      committedAt: at,
      conversationSnippet: n === 0 ? convo(["user", s ? "Right request" : "Left request"]) : "",
    });
  });

  beforeAll(async () => {
    const repo = tempRepo();
    writeTimeline(repo.root, repo.env, { entries });
    world = await bothWays(repo, (serve) => postEntries(serve, entries));
  });

  for (const mode of ["local", "team"] as const) {
    test(`${mode}: the roots show as context on the first page, then in place once their page loads`, async () => {
      const p = await open(world, mode, "#/", ".session-card");
      let seen = await cards(p);
      expect(seen.map((c) => c.request)).toEqual(["Right request", "Left request"]);
      expect(seen.map((c) => c.lines[0])).toEqual(["(context) Right step 0", "(context) Left step 0"]);
      expect(seen.map((c) => c.lines.length)).toEqual([26, 26]);
      await p.locator("button.more").scrollIntoViewIfNeeded();
      await p.waitForFunction(() => document.querySelectorAll(".entry-row").length === 60);
      seen = await cards(p);
      expect(seen.map((c) => c.lines[0])).toEqual(["Right step 0", "Left step 0"]);
      expect(seen.map((c) => c.lines.length)).toEqual([30, 30]);
      expect(seen[0]!.lines.slice(1).every((l) => l.startsWith("└ Right step"))).toBe(true);
      expect(await p.$$eval(".context-row", (r) => r.length)).toBe(0);
    });
  }
});

describe("session page: its time range is the conversation's, from the first line's time to the last's", () => {
  let world: BothWays;
  // the conversation ran 08:05–08:47; its commits were made later (10:00, 10:30), as when a session is committed at its end
  const line = (role: "user" | "assistant", content: string, at: string) => `${JSON.stringify({ role, content, at })}\n`;
  const timed =
    line("user", "Tidy the exporter", "2026-11-20T08:05:00.000Z") +
    line("assistant", "Tidied.", "2026-11-20T08:31:00.000Z") +
    line("user", "Now its tests", "2026-11-20T08:40:00.000Z") +
    line("assistant", "Done.", "2026-11-20T08:47:00.000Z");
  const untimedLines = convo(["user", "Rename the loader"], ["assistant", "Renamed."]);
  const entries = [
    makeEntry({ commitHash: "c".repeat(40), title: "Tidy the exporter", claudeSessionId: "sess-timed", committedAt: "2026-11-20T10:00:00.000Z", capturedAt: "2026-11-20T10:00:00.000Z", conversationSnippet: timed.split("\n").slice(0, 2).join("\n") + "\n" }),
    makeEntry({ commitHash: "d".repeat(40), title: "Test the exporter", claudeSessionId: "sess-timed", committedAt: "2026-11-20T10:30:00.000Z", capturedAt: "2026-11-20T10:30:00.000Z", conversationSnippet: timed.split("\n").slice(2).join("\n") }),
    // stored before lines carried their time: the commits' times stand in
    makeEntry({ commitHash: "e".repeat(40), title: "Rename the loader", claudeSessionId: "sess-untimed", committedAt: "2026-11-21T14:00:00.000Z", capturedAt: "2026-11-21T14:00:00.000Z", conversationSnippet: untimedLines }),
    makeEntry({ commitHash: "f".repeat(40), title: "Rename its tests", claudeSessionId: "sess-untimed", committedAt: "2026-11-21T14:20:00.000Z", capturedAt: "2026-11-21T14:20:00.000Z" }),
  ];

  beforeAll(async () => {
    const repo = tempRepo();
    writeTimeline(repo.root, repo.env, { entries, sessions: { "sess-timed": timed, "sess-untimed": untimedLines } });
    world = await bothWays(repo, async (serve) => {
      await postEntries(serve, entries);
      for (const [id, content] of [["sess-timed", timed], ["sess-untimed", untimedLines]]) {
        const res = await fetch(`${serve.origin}/api/v1/work-sessions/prompt`, {
          method: "PUT",
          headers: { "Content-Type": "application/json", "X-API-Key": serve.key },
          body: JSON.stringify({ claudeSessionId: id, content }),
        });
        if (!res.ok) throw new Error(`session refused: ${res.status}`);
      }
    });
  });

  /** The range as the page words it for one day (`YYYY-MM-DD HH:MM–HH:MM` in the browser's own time zone). */
  const range = (p: Page, from: string, to: string) =>
    p.evaluate(
      ([a, b]) => {
        const two = (n: number) => String(n).padStart(2, "0");
        const time = (d: Date) => `${two(d.getHours())}:${two(d.getMinutes())}`;
        const start = new Date(a!);
        return `${start.getFullYear()}-${two(start.getMonth() + 1)}-${two(start.getDate())} ${time(start)}–${time(new Date(b!))}`;
      },
      [from, to],
    );

  for (const mode of ["local", "team"] as const) {
    test(`${mode}: from the lines' times; a conversation stored without times shows its commits' range`, async () => {
      const p = await open(world, mode, "#/session/sess-timed", ".transcript .turn");
      const meta = await p.$$eval(".session-meta", (m) => m.map((x) => x.textContent).join(" "));
      expect(meta).toContain(`${await range(p, "2026-11-20T08:05:00.000Z", "2026-11-20T08:47:00.000Z")} ·`);
      expect(meta).toContain("4 turns · 2 commits");
      await showRoute(p, "#/session/sess-untimed", ".transcript .turn");
      const old = await p.$$eval(".session-meta", (m) => m.map((x) => x.textContent).join(" "));
      expect(old).toContain(`${await range(p, "2026-11-21T14:00:00.000Z", "2026-11-21T14:20:00.000Z")} ·`);
    });
  }
});
