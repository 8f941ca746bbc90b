/**
 * The team timeline tells the truth: three people, each in a clone of their own, two agents (Claude Code and
 * Codex) in overlapping sessions, several commits in one second, an AskUserQuestion answer, a /clear handoff and
 * an imported past session, pushed with `aiflare sync` under each person's own key to `aiflare serve` on SQLite and
 * on PostgreSQL. The terminal (`history list --json`), `aiflare ui`'s read API and page, the team server's read
 * API and its page in headless Chromium must show the same sessions, groups, order, people and counts: each is
 * reduced to one normalised structure and compared, never eyeballed.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { copyFileSync } from "node:fs";
import { basename, join } from "node:path";
import type { Browser, Page } from "playwright-core";
import { binary, FIXTURES, runBin, runHook, tempRepo, type TempRepo } from "../helpers.ts";
import { useBackends } from "../server/backends.ts";
import { launchBrowser, showRoute, signInTeam, startServe, startUi, type RunningServe, type RunningUi } from "../dashboard-support.ts";
import { agentCommit, endTemplate, remakeShownCommits, session, showEntry, startTemplate } from "./capture-support.ts";

// three clones, two servers, two PostgreSQL-backed processes and a browser on a loaded machine
setDefaultTimeout(240_000);

// Functions passed to page.evaluate run in the page; the test's own type world has no DOM.
declare const document: any, location: any;

const backends = useBackends();

/** One person: a git identity, a clone, the key issued to them on each server, their `aiflare ui`. */
interface Person {
  name: string;
  email: string;
  repo: TempRepo;
  ui?: RunningUi;
}

interface Team {
  backend: string;
  serve: RunningServe;
  keys: Record<string, string>;
}

/** An entry as every view must agree on it. */
interface Seen {
  commitHash: string;
  title: string;
  session: string;
  groupId: string;
  agentType: string;
  author: string | null;
  continuation: boolean;
  continuedFrom: string | null;
  model: string | null;
  tag: string | null;
  summaryStatus: string | null;
}

type AnyEntry = Record<string, any>;

const people: Record<"alice" | "bob" | "carol", Person> = {} as never;
const teams: Team[] = [];
const commits: Record<string, string> = {};
/** the remade commits of the imported session that have an entry, and how many import said it wrote */
let imported: string[] = [];
let importedCount = 0;
let browser: Browser;
const cleanups: (() => Promise<void> | void)[] = [];

const normalise = (e: AnyEntry): Seen => ({
  commitHash: e.commitHash,
  title: e.title,
  session: e.claudeSessionId,
  groupId: e.groupRootId ?? e.commitHash,
  agentType: e.agentType,
  author: e.author ?? null,
  continuation: e.continuation === true,
  continuedFrom: e.continuedFrom ?? null,
  model: e.model ?? null,
  tag: e.tag ?? null,
  summaryStatus: e.summaryStatus ?? null,
});

/** The one order (SPEC §4), newest first: commit time, then when the entry was first recorded, then the hash. */
function oneOrder(a: AnyEntry, b: AnyEntry): number {
  const at = (e: AnyEntry) => Date.parse(e.committedAt ?? e.capturedAt);
  const rec = (e: AnyEntry) => Date.parse(e.recordedAt ?? e.capturedAt);
  return at(b) - at(a) || rec(b) - rec(a) || (a.commitHash < b.commitHash ? 1 : a.commitHash > b.commitHash ? -1 : 0);
}

/** `history list --json` of a clone: every entry, newest first. */
async function cliList(p: Person, ...args: string[]): Promise<AnyEntry[]> {
  const r = await runBin(["history", "list", "--json", ...args], { cwd: p.repo.root, env: p.repo.env });
  if (r.code !== 0) throw new Error(`history list failed: ${r.stderr}`);
  return JSON.parse(r.stdout);
}

/** GET of a read API, as JSON: `aiflare ui` with its token, the team server with a key. */
async function getJson(origin: string, auth: Record<string, string>, path: string): Promise<any> {
  const res = await fetch(`${origin}${path}`, { headers: auth });
  if (res.status !== 200) throw new Error(`${path}: ${res.status} ${await res.text()}`);
  return res.json();
}

const uiAuth = (p: Person) => ({ Authorization: `Bearer ${p.ui!.token}` });
const teamAuth = (t: Team, who = "alice") => ({ "X-API-Key": t.keys[who]! });

/** Every page of a timeline answer, read by cursor in small pages: its entries, session facts and context roots. */
async function allPages(origin: string, auth: Record<string, string>, query = "") {
  const entries: AnyEntry[] = [];
  const sessions: Record<string, AnyEntry> = {};
  let cursor: string | null = null;
  let pages = 0;
  do {
    const params = new URLSearchParams(query);
    params.set("limit", "4");
    if (cursor) params.set("cursor", cursor);
    const page = await getJson(origin, auth, `/api/v1/timeline?${params}`);
    entries.push(...page.entries);
    // a session's facts are about the whole session, whichever page names it
    for (const [id, facts] of Object.entries(page.sessions as Record<string, AnyEntry>)) {
      if (sessions[id]) expect({ id, facts }).toEqual({ id, facts: sessions[id] });
      sessions[id] = facts;
    }
    cursor = page.nextCursor;
    if (++pages > 100) throw new Error("the cursor never ends");
  } while (cursor);
  return { entries, sessions };
}

/** The cards the page must show for a newest-first list: sessions by latest activity, groups oldest first. */
function expectedCards(list: AnyEntry[]): { session: string; rows: string[] }[] {
  const bySession = new Map<string, AnyEntry[]>();
  for (const e of list) bySession.set(e.claudeSessionId, [...(bySession.get(e.claudeSessionId) ?? []), e]);
  return [...bySession].map(([session, entries]) => {
    const groups = new Map<string, AnyEntry[]>();
    for (const e of [...entries].reverse()) {
      const g = e.groupRootId ?? e.commitHash;
      groups.set(g, [...(groups.get(g) ?? []), e]);
    }
    const rows = [...groups.values()].flatMap((members) => members.map((e) => (e.commitHash === (e.groupRootId ?? e.commitHash) ? e.commitHash : `└ ${e.commitHash}`)));
    return { session, rows };
  });
}

/** What a person sees of each card: its session, heading, meta line, /clear links and rows (hash, nesting, marks). */
function cardsOnPage(page: Page) {
  return page.$$eval(".session-card", (cs) =>
    cs.map((c: any) => ({
      session: c.dataset.session as string,
      request: c.querySelector(".request")?.textContent ?? "",
      meta: c.querySelector(".meta")?.textContent ?? "",
      person: c.querySelector(".person")?.textContent ?? "",
      links: c.querySelector(".clear-links")?.textContent ?? "",
      rows: [...c.querySelectorAll(".rows .entry-row, .rows .context-row")].map((r: any) => {
        const mark = r.classList.contains("member") ? "└ " : "";
        const ctx = r.classList.contains("context-row") ? "(context) " : "";
        const cont = r.querySelector(".continued") ? " [after question]" : "";
        return `${ctx}${mark}${r.dataset.hash}${cont}`;
      }),
    })),
  );
}

/** One signed-in tab per dashboard (each person's `aiflare ui`, each team server), reused from route to route. */
const tabs = new Map<unknown, Page>();

/** Opens `route` on a page signed in to `aiflare ui` of `p`, or to the team server, once `ready` shows. */
async function open(where: { ui: Person } | { team: Team }, route: string, ready: string): Promise<Page> {
  const key = "ui" in where ? where.ui : where.team;
  let page = tabs.get(key);
  if (!page) {
    const ctx = await browser.newContext({ viewport: { width: 1280, height: 2000 }, timezoneId: "UTC" });
    cleanups.push(() => ctx.close());
    page = await ctx.newPage();
    if ("ui" in where) await page.goto(where.ui.ui!.url);
    else await signInTeam(page, where.team.serve.origin, where.team.keys.alice!);
    await page.waitForSelector("body[data-ready='1']");
    tabs.set(key, page);
  }
  await showRoute(page, route, ready);
  return page;
}

/** Every card of the timeline at `route`, all pages loaded. */
async function allCards(where: { ui: Person } | { team: Team }, route: string, total: number) {
  const page = await open(where, route, ".session-card");
  // later pages load as the end of the list scrolls into view
  await page.waitForFunction((n) => document.querySelectorAll(".entry-row").length === n, total);
  return cardsOnPage(page);
}

const everyone = () => Object.values(people);
const owner = (p: Person) => p.name;

beforeAll(async () => {
  binary();
  browser = await launchBrowser();
  const seed = tempRepo();
  cleanups.push(() => seed.cleanup());
  const origin = join(seed.dir, "origin.git");
  seed.git("clone", "-q", "--bare", seed.root, origin);
  for (const [key, name, email] of [
    ["alice", "Alice Martin", "alice@example.com"],
    ["bob", "Bob Stone", "bob@corp.example"],
    ["carol", "Carol Ng", "carol@example.org"],
  ] as const) {
    const repo = tempRepo({ empty: true });
    cleanups.push(() => repo.cleanup());
    Object.assign(repo.env, { GIT_AUTHOR_NAME: name, GIT_AUTHOR_EMAIL: email, GIT_COMMITTER_NAME: name, GIT_COMMITTER_EMAIL: email });
    repo.git("remote", "add", "origin", origin);
    repo.git("fetch", "-q", "origin");
    repo.git("reset", "-q", "--hard", "origin/main");
    people[key] = { name, email, repo };
  }
  const { alice, bob, carol } = people;

  // Carol's clone holds the commits of a real past Claude Code session, imported below
  const transcript = join(FIXTURES, "entireio__cli/c8/d061cde22b/2/full.jsonl");
  imported = remakeShownCommits(carol.repo, transcript).made;

  // one clock for the team: commit dates have whole seconds, and several commits share one
  let clock = 0;
  const commit = (p: Person, name: string, message: string, files: Record<string, string>, sameSecond = false) => {
    clock = sameSecond ? clock : Math.max(Math.floor(Date.now() / 1000), clock + 1);
    p.repo.env.GIT_COMMITTER_DATE = p.repo.env.GIT_AUTHOR_DATE = `${clock} +0000`;
    const c = agentCommit(p.repo, message, files);
    commits[name] = c.hash;
    return c;
  };
  const ok = (r: { code: number; stderr: string }) => {
    if (r.code !== 0) throw new Error(r.stderr);
  };
  const claude = (p: Person, id: string) => {
    const s = session(p.repo, id);
    const base = { session_id: id, cwd: p.repo.root, transcript_path: join(p.repo.home, "none.jsonl") };
    return {
      ...s,
      start: (source: string) => runHook(p.repo, "session-start", { ...startTemplate, ...base, source }),
      endFor: (reason: string) => runHook(p.repo, "session-end", { ...endTemplate, ...base, reason }),
      commit: async (name: string, message: string, files: Record<string, string>, sameSecond = false) =>
        ok(await s.bash(`git add -A && git commit -m "${message}"`, commit(p, name, message, files, sameSecond).stdout)),
    };
  };
  // Codex's payloads: the common fields with the model in each, the shell command as an argv array
  const codex = (p: Person, id: string) => {
    const base = { session_id: id, cwd: p.repo.root, transcript_path: null, model: "gpt-5.1-codex" };
    const hook = (event: string, payload: Record<string, unknown>) => runHook(p.repo, event, { ...base, ...payload }, { agent: "codex" });
    return {
      start: () => hook("session-start", { hook_event_name: "SessionStart", source: "startup" }),
      prompt: (prompt: string) => hook("user-prompt-submit", { hook_event_name: "UserPromptSubmit", prompt }),
      stop: (message: string) => hook("stop", { hook_event_name: "Stop", turn_id: "t1", stop_hook_active: false, last_assistant_message: message }),
      commit: async (name: string, message: string, files: Record<string, string>, sameSecond = false) => {
        const c = commit(p, name, message, files, sameSecond);
        ok(
          await hook("post-tool-use", {
            hook_event_name: "PostToolUse",
            tool_name: "Bash",
            tool_input: { command: ["bash", "-lc", `git add -A && git commit -m '${message}'`] },
            tool_response: c.stdout,
          }),
        );
      },
    };
  };

  const aliceClaude = claude(alice, "alice-claude-importer");
  const aliceCodex = codex(alice, "alice-codex-settings");
  const bobBefore = claude(bob, "bob-claude-loader");
  const bobAfter = claude(bob, "bob-claude-loader-cont");
  const carolCodex = codex(carol, "carol-codex-docs");

  ok(await aliceClaude.start("startup"));
  await aliceClaude.prompt("Make the importer stream rows");
  ok(await bobBefore.start("startup"));
  await bobBefore.prompt("Migrate the config loader");
  ok(await aliceCodex.start());
  await aliceCodex.prompt("Tidy the settings page");
  await aliceClaude.commit("A1", "feat: stream importer rows", { "src/importer.ts": "stream\n" });
  await bobBefore.commit("B1", "feat: loader, part 1", { "src/config/loader.ts": "part 1\n" });
  // three commits in one second, by two people and two agents
  await bobBefore.commit("B2", "test: loader, part 1", { "test/loader.test.ts": "test 1\n" }, true);
  await aliceCodex.commit("X1", "refactor: settings layout", { "src/settings.ts": "layout\n" }, true);
  await aliceClaude.commit("A2", "test: importer streaming", { "test/importer.test.ts": "stream test\n" });
  ok(await carolCodex.start());
  await carolCodex.prompt("Document the importer");
  await carolCodex.commit("C1", "docs: importer", { "docs/importer.md": "# Importer\n" });
  await carolCodex.commit("C2", "docs: importer example", { "docs/example.md": "example\n" }, true);
  // the agent asks, the user answers: the next commit continues the request
  await aliceClaude.stop("Streaming works. Should empty rows be skipped?");
  ok(await aliceClaude.ask());
  await aliceClaude.prompt("Yes, skip them");
  await aliceClaude.commit("A3", "feat: skip empty rows", { "src/importer.ts": "stream\nskip\n" });
  // /clear: the session ends with reason clear, and a new one starts from it
  await bobBefore.stop("Part 1 is done; part 2 moves the importer's settings.");
  ok(await bobBefore.endFor("clear"));
  ok(await bobAfter.start("clear"));
  await bobAfter.prompt("Go on with the loader");
  await bobAfter.commit("B3", "feat: loader, part 2", { "src/config/loader.ts": "part 2\n", "src/importer.ts": "stream\nskip\nconfig\n" });
  await aliceCodex.prompt("Also add a dark mode toggle");
  await aliceCodex.commit("X2", "feat: dark mode toggle", { "src/theme.ts": "dark\n" });
  await aliceCodex.commit("X3", "test: dark mode toggle", { "test/theme.test.ts": "dark test\n" }, true);
  await carolCodex.stop("The importer is documented.");
  await aliceCodex.stop("Dark mode is in.");
  ok(await aliceClaude.endFor("prompt_input_exit"));
  ok(await bobAfter.endFor("prompt_input_exit"));
  for (const p of everyone()) {
    delete p.repo.env.GIT_COMMITTER_DATE;
    delete p.repo.env.GIT_AUTHOR_DATE;
  }

  const copy = join(carol.repo.dir, basename(transcript));
  copyFileSync(transcript, copy);
  const imp = await runBin(["import", "--json", copy], { cwd: carol.repo.root, env: carol.repo.env });
  if (imp.code !== 0) throw new Error(`import failed: ${imp.stderr}`);
  importedCount = JSON.parse(imp.stdout).imported;
  imported = imported.filter((h) => showEntry(carol.repo, h) !== null);

  for (const p of everyone()) {
    p.ui = await startUi(p.repo.root, p.repo.env);
    cleanups.push(() => p.ui!.stop());
  }

  // each backend: a project whose first key is Alice's, a key for Bob and for Carol; each person syncs with theirs
  for (const backend of backends) {
    const db = await backend.fresh();
    const serve = await startServe(db.url, alice.repo.home, alice.repo.env, owner(alice), ["--rate-limit", "0"]);
    cleanups.push(() => serve.stop());
    const keys: Record<string, string> = { alice: serve.key };
    for (const who of ["bob", "carol"] as const) {
      const r = await runBin(["serve", "key", "create", "reports", "--owner", owner(people[who]), "--json", "--database", db.url], { cwd: alice.repo.home, env: alice.repo.env });
      if (r.code !== 0) throw new Error(`key create failed: ${r.stderr}`);
      keys[who] = JSON.parse(r.stdout).key;
    }
    for (const [who, p] of Object.entries(people)) {
      const r = await runBin(["sync", "--json"], { cwd: p.repo.root, env: { ...p.repo.env, AIFLARE_ENDPOINT: serve.origin, AIFLARE_API_KEY: keys[who]! } });
      if (r.code !== 0) throw new Error(`sync of ${who} to ${backend.name} failed: ${r.stdout}${r.stderr}`);
    }
    teams.push({ backend: backend.name, serve, keys });
  }
});

afterAll(async () => {
  for (const c of cleanups.reverse()) await c();
  await browser?.close();
});

describe("the scenario was recorded as it happened", () => {
  test("every commit has its entry, with its person, agent, group, continuation and /clear predecessor", async () => {
    const { alice, bob, carol } = people;
    const e = (p: Person, name: string) => showEntry(p.repo, commits[name]!)!;
    for (const [p, names] of [[alice, ["A1", "A2", "A3", "X1", "X2", "X3"]], [bob, ["B1", "B2", "B3"]], [carol, ["C1", "C2"]]] as const) {
      for (const n of names) expect({ n, author: e(p, n)?.author }).toEqual({ n, author: `${p.name} <${p.email}>` });
    }
    expect(e(alice, "A1").model).toBe(startTemplate.model);
    expect(e(alice, "X1")).toMatchObject({ agentType: "CODEX", model: "gpt-5.1-codex" });
    expect(e(alice, "A2").groupRootId).toBe(commits.A1);
    expect(e(alice, "A3")).toMatchObject({ groupRootId: commits.A1, continuation: true });
    expect(e(alice, "X2").groupRootId).toBeNull();
    expect(e(alice, "X3").groupRootId).toBe(commits.X2);
    expect(e(bob, "B2").groupRootId).toBe(commits.B1);
    expect(e(bob, "B3")).toMatchObject({ continuedFrom: "bob-claude-loader", groupRootId: null });
    expect(imported.length).toBeGreaterThan(0);
    expect(imported.length).toBe(importedCount);
    // the imported commits keep the order the session made them in, even those of one second
    expect((await cliList(carol)).flatMap((e) => (imported.includes(e.commitHash) ? [e.commitHash] : []))).toEqual([...imported].reverse());
    for (const h of imported) expect(showEntry(carol.repo, h)).toMatchObject({ summaryStatus: "imported", author: `${carol.name} <${carol.email}>` });
    // several commits share a second: the commit time alone cannot order them
    expect(new Set(["B2", "X1"].map((n) => showEntry(n === "X1" ? alice.repo : bob.repo, commits[n]!)!.committedAt)).size).toBe(1);
  });

  test("sync sent everything to both backends; nothing is pending for either", async () => {
    for (const [who, p] of Object.entries(people)) {
      for (const t of teams) {
        const r = await runBin(["sync", "--status", "--json"], { cwd: p.repo.root, env: { ...p.repo.env, AIFLARE_ENDPOINT: t.serve.origin, AIFLARE_API_KEY: t.keys[who]! } });
        const current = JSON.parse(r.stdout).targets.find((x: AnyEntry) => x.current);
        expect({ who, backend: t.backend, pending: [current.pendingEntries, current.pendingSessions] }).toEqual({ who, backend: t.backend, pending: [0, 0] });
      }
    }
  });
});

describe("one history, wherever it is read", () => {
  test("each clone: aiflare ui's read API pages through exactly what history list --json prints, in its order", async () => {
    for (const p of everyone()) {
      const cli = await cliList(p);
      const ui = await allPages(p.ui!.origin, uiAuth(p));
      expect(ui.entries.map(normalise)).toEqual(cli.map(normalise));
      expect([...cli].sort(oneOrder).map((e) => e.commitHash)).toEqual(cli.map((e) => e.commitHash));
      expect(Object.keys(ui.sessions).sort()).toEqual([...new Set(cli.map((e) => e.claudeSessionId))].sort());
    }
  });

  for (const backend of ["sqlite", "postgres"]) {
    test(`${backend}: the team server holds the union of the clones, in the one order, each entry sent by its person's key`, async () => {
      const t = teams.find((x) => x.backend === backend)!;
      const local = (await Promise.all(everyone().map((p) => cliList(p)))).flat().sort(oneOrder);
      const team = await allPages(t.serve.origin, teamAuth(t));
      expect(team.entries.map(normalise)).toEqual(local.map(normalise));
      expect(team.entries.filter((e) => e.summaryStatus === "imported")).toHaveLength(importedCount);
      const ownerOf = new Map<string, string>();
      for (const p of everyone()) for (const e of await cliList(p)) ownerOf.set(e.commitHash, owner(p));
      expect(team.entries.map((e) => [e.commitHash, e.keyOwner])).toEqual(local.map((e) => [e.commitHash, ownerOf.get(e.commitHash)]));
      // every key of the project reads the same timeline
      for (const who of ["bob", "carol"]) expect((await allPages(t.serve.origin, teamAuth(t, who))).entries.map(normalise)).toEqual(team.entries.map(normalise));
    });

    test(`${backend}: each person's entries and sessions on the team server are those of their clone, facts included`, async () => {
      const t = teams.find((x) => x.backend === backend)!;
      const everySession: Record<string, AnyEntry> = {};
      for (const p of everyone()) {
        const ui = await allPages(p.ui!.origin, uiAuth(p));
        const mine = await allPages(t.serve.origin, teamAuth(t), `author=${encodeURIComponent(p.email)}`);
        expect(mine.entries.map(normalise)).toEqual(ui.entries.map(normalise));
        expect(mine.sessions).toEqual(ui.sessions);
        expect((await cliList(p, "--author", p.email)).map(normalise)).toEqual(ui.entries.map(normalise));
        Object.assign(everySession, ui.sessions);
      }
      expect((await allPages(t.serve.origin, teamAuth(t))).sessions).toEqual(everySession);
    });

    test(`${backend}: the two team servers answer alike`, async () => {
      const [a, b] = teams;
      const strip = (x: { entries: AnyEntry[]; sessions: Record<string, AnyEntry> }) => ({ entries: x.entries.map(normalise), sessions: x.sessions });
      expect(strip(await allPages(a!.serve.origin, teamAuth(a!)))).toEqual(strip(await allPages(b!.serve.origin, teamAuth(b!))));
    });
  }
});

describe("the pages show it the same way", () => {
  test("each clone's aiflare ui page: one card per session, groups under their roots, in the one order", async () => {
    for (const p of everyone()) {
      const cli = await cliList(p);
      const seen = await allCards({ ui: p }, "#/", cli.length);
      expect(seen.map((c) => ({ session: c.session, rows: c.rows.map((r) => r.replace(" [after question]", "")) }))).toEqual(expectedCards(cli));
      for (const c of seen) expect({ session: c.session, person: c.person }).toEqual({ session: c.session, person: p.name });
    }
  });

  for (const backend of ["sqlite", "postgres"]) {
    test(`${backend}: the team page shows every clone's cards exactly as its own aiflare ui does, merged in the one order`, async () => {
      const t = teams.find((x) => x.backend === backend)!;
      const local = (await Promise.all(everyone().map((p) => cliList(p)))).flat().sort(oneOrder);
      const team = await allCards({ team: t }, "#/", local.length);
      expect(team.map((c) => ({ session: c.session, rows: c.rows.map((r) => r.replace(" [after question]", "")) }))).toEqual(expectedCards(local));
      const bySession = new Map(team.map((c) => [c.session, c]));
      for (const p of everyone()) {
        const mine = await allCards({ ui: p }, "#/", (await cliList(p)).length);
        // heading, meta (agent, person, branch, time range, commit count, id), /clear links and rows all alike
        expect(mine.map((c) => bySession.get(c.session))).toEqual(mine);
      }
      const cont = team.find((c) => c.session === "bob-claude-loader-cont")!;
      expect(cont.links).toBe("↪ continues bob-claude-loader after /clear");
      expect(team.find((c) => c.session === "bob-claude-loader")!.links).toBe("↪ continued after /clear in bob-claude-loader-cont");
      expect(team.find((c) => c.session === "alice-claude-importer")!.rows).toContain(`└ ${commits.A3} [after question]`);
    });

    test(`${backend}: the team page filtered by person shows that person's aiflare ui page`, async () => {
      const t = teams.find((x) => x.backend === backend)!;
      for (const p of everyone()) {
        const n = (await cliList(p)).length;
        const mine = await allCards({ ui: p }, "#/", n);
        const filtered = await allCards({ team: t }, `#/?author=${encodeURIComponent(p.email)}`, n);
        expect(filtered).toEqual(mine);
      }
    });
  }
});

describe("entries, questions, files and numbers agree", () => {
  const sum = (xs: Record<string, number>[]) => {
    const out: Record<string, number> = {};
    for (const x of xs) for (const [k, v] of Object.entries(x)) out[k] = (out[k] ?? 0) + v;
    return out;
  };

  for (const backend of ["sqlite", "postgres"]) {
    test(`${backend}: the entry page's answer, with the question and answer kinds of its delta, and its commit`, async () => {
      const t = teams.find((x) => x.backend === backend)!;
      const { alice } = people;
      const lines = (snippet: string) => snippet.split("\n").filter(Boolean).map((l) => JSON.parse(l));
      const show = await runBin(["history", "show", "--json", commits.A3!], { cwd: alice.repo.root, env: alice.repo.env });
      const cli = JSON.parse(show.stdout);
      const ui = await getJson(alice.ui!.origin, uiAuth(alice), `/api/v1/entries/${commits.A3}`);
      const team = await getJson(t.serve.origin, teamAuth(t), `/api/v1/entries/${commits.A3!.slice(0, 10)}`);
      const kinds = lines(cli.conversationSnippet).map((l: AnyEntry) => l.kind ?? l.role);
      expect(kinds).toContain("question");
      expect(kinds).toContain("answer");
      expect(lines(ui.entry.conversationSnippet)).toEqual(lines(cli.conversationSnippet));
      expect(lines(team.entry.conversationSnippet)).toEqual(lines(cli.conversationSnippet));
      expect(normalise(team.entry)).toEqual(normalise(cli));
      expect(team.group.map(normalise)).toEqual(ui.group.map(normalise));
      expect(team.group.map((e: AnyEntry) => e.commitHash)).toEqual([commits.A1, commits.A2, commits.A3]);
      expect(team.commit.show).toBe(ui.commit.show);
      expect(team.commit.show).toBe(`git show ${commits.A3}`);
    });

    test(`${backend}: a session's answer: the same entries and cuts`, async () => {
      const t = teams.find((x) => x.backend === backend)!;
      for (const [p, id] of [[people.alice, "alice-claude-importer"], [people.bob, "bob-claude-loader-cont"], [people.carol, "carol-codex-docs"]] as const) {
        const ui = await getJson(p.ui!.origin, uiAuth(p), `/api/v1/sessions/${id}`);
        const team = await getJson(t.serve.origin, teamAuth(t), `/api/v1/sessions/${id}`);
        expect({ id, entries: team.entries.map(normalise), cuts: team.cuts }).toEqual({ id, entries: ui.entries.map(normalise), cuts: ui.cuts });
      }
    });

    test(`${backend}: a file touched by two people: the team's entries are the union of theirs, in the one order`, async () => {
      const t = teams.find((x) => x.backend === backend)!;
      const path = "src/importer.ts";
      const per = await Promise.all(everyone().map((p) => getJson(p.ui!.origin, uiAuth(p), `/api/v1/files?path=${path}`)));
      const team = await getJson(t.serve.origin, teamAuth(t), `/api/v1/files?path=${path}`);
      const union = per.flatMap((x) => x.entries).sort(oneOrder);
      expect(team.entries.map(normalise)).toEqual(union.map(normalise));
      expect(team.entries.map((e: AnyEntry) => e.commitHash)).toEqual([commits.B3, commits.A3, commits.A1]);
    });

    test(`${backend}: the overview counts the sum of the clones', on the page as in the API`, async () => {
      const t = teams.find((x) => x.backend === backend)!;
      const per = await Promise.all(everyone().map((p) => getJson(p.ui!.origin, uiAuth(p), "/api/v1/stats?days=365")));
      const team = await getJson(t.serve.origin, teamAuth(t), "/api/v1/stats?days=365");
      const days = (s: AnyEntry) => Object.fromEntries(s.perDay.map((d: AnyEntry) => [d.day, d.count]));
      expect({ entries: team.entries, sessions: team.sessions, perTag: team.perTag, perDay: days(team) }).toEqual({
        entries: per.reduce((n, s) => n + s.entries, 0),
        sessions: per.reduce((n, s) => n + s.sessions, 0),
        perTag: sum(per.map((s) => s.perTag)),
        perDay: sum(per.map(days)),
      });
      const all = (await Promise.all(everyone().map((p) => cliList(p)))).flat();
      const inWindow = all.filter((e) => Date.parse(e.committedAt ?? e.capturedAt) >= Date.parse(team.perDay[0].day));
      expect(team.entries).toBe(inWindow.length);
      // the most active files over everyone's entries: each count right, none left out that beats one shown
      const counts = sum(inWindow.map((e) => Object.fromEntries((e.changedFiles as string[]).map((f) => [f, 1]))));
      expect(team.topFiles.map((f: AnyEntry) => [f.path, f.count])).toEqual(team.topFiles.map((f: AnyEntry) => [f.path, counts[f.path]]));
      const least = Math.min(...team.topFiles.map((f: AnyEntry) => f.count));
      const shown = new Set(team.topFiles.map((f: AnyEntry) => f.path));
      expect(Object.entries(counts).filter(([f, n]) => !shown.has(f) && n > least)).toEqual([]);
      const page = await open({ team: t }, "#/overview?days=365", ".figures");
      const figures = await page.textContent(".figures");
      expect(figures).toContain(`${team.entries} entries`);
      expect(figures).toContain(`${team.sessions} sessions`);
    });
  }
});

describe("the entry and session pages read the same in aiflare ui and on the team server", () => {
  /** What a person reads on an entry page: title, badges, facts (the commit's own section aside), group, prompts. */
  const entryPage = (page: Page) =>
    page.evaluate(() => ({
      title: document.querySelector("main h1")?.textContent,
      badges: document.querySelector(".badges")?.textContent,
      facts: [...document.querySelectorAll("dl.facts dt")].map((dt: any) => `${dt.textContent}: ${dt.nextElementSibling?.textContent}`),
      group: [...document.querySelectorAll(".group li")].map((li: any) => li.textContent),
      prompts: [...document.querySelectorAll(".prompts > *")].map((t: any) => t.textContent),
    }));
  /** What a person reads on a session page: heading, meta lines, and the transcript's turns and commit markers in order. */
  const sessionPage = (page: Page) =>
    page.evaluate(() => ({
      title: document.querySelector("main h1")?.textContent,
      meta: [...document.querySelectorAll(".session-meta")].map((m: any) => m.textContent),
      transcript: [...document.querySelectorAll(".transcript > *")].map((t: any) => (t.classList.contains("cut") ? `commit ${t.dataset.hash}` : t.textContent)),
    }));
  const ownerOf = (id: string) => everyone().find((p) => showEntry(p.repo, commits[id] ?? id) !== null)!;

  for (const backend of ["sqlite", "postgres"]) {
    test(`${backend}: entry pages (a continuation, a /clear successor, Codex, a commit sharing its second, an imported one)`, async () => {
      const t = teams.find((x) => x.backend === backend)!;
      for (const name of ["A3", "B3", "X1", "B2", "C2", imported[0]!]) {
        const hash = commits[name] ?? name;
        const p = ownerOf(name);
        const local = await entryPage(await open({ ui: p }, `#/entry/${hash}`, ".prompts"));
        const team = await entryPage(await open({ team: t }, `#/entry/${hash}`, ".prompts"));
        expect({ name, ...team }).toEqual({ name, ...local });
        expect(local.facts).toContain(`Author: ${p.name} <${p.email}>`);
      }
      const a3 = await entryPage(await open({ team: t }, `#/entry/${commits.A3}`, ".prompts"));
      expect(a3.prompts.join("\n")).toContain("Yes, skip them");
      expect(a3.facts).toContain(`Model: ${startTemplate.model}`);
      const b3 = await entryPage(await open({ team: t }, `#/entry/${commits.B3}`, ".prompts"));
      expect(b3.facts).toContain("Continues: bob-claude-loader (before /clear)");
    });

    test(`${backend}: session pages: the same turns, questions, answers and commit markers`, async () => {
      const t = teams.find((x) => x.backend === backend)!;
      const importedSession = showEntry(people.carol.repo, imported[0]!)!.claudeSessionId as string;
      for (const [p, id] of [
        [people.alice, "alice-claude-importer"],
        [people.alice, "alice-codex-settings"],
        [people.bob, "bob-claude-loader"],
        [people.bob, "bob-claude-loader-cont"],
        [people.carol, "carol-codex-docs"],
        [people.carol, importedSession],
      ] as const) {
        const route = `#/session/${encodeURIComponent(id)}`;
        const local = await sessionPage(await open({ ui: p }, route, ".transcript"));
        const team = await sessionPage(await open({ team: t }, route, ".transcript"));
        expect({ id, ...team }).toEqual({ id, ...local });
        expect(local.transcript.filter((x: string) => x.startsWith("commit ")).length).toBeGreaterThan(0);
      }
    });
  }
});
