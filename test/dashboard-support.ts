/**
 * The dashboard tests' world: a repository whose entries were captured for real (hooks, git commits,
 * `aiflare capture`, through the compiled binary), `aiflare ui` started on it, and one headless Chromium.
 */
import { existsSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { chromium, type Browser, type Page } from "playwright-core";
import { ROOT, binary, runBin, type TempRepo } from "./helpers.ts";
import { agentCommit, capture, session } from "./e2e/capture-support.ts";

export const ARTIFACTS = join(ROOT, "test-artifacts");
/** Debian's chromium (scripts/test-deps.sh installs it), wherever PATH has it, or AIFLARE_CHROMIUM. */
export const CHROMIUM =
  process.env.AIFLARE_CHROMIUM ?? (existsSync("/usr/bin/chromium") ? "/usr/bin/chromium" : (Bun.which("chromium") ?? "/usr/bin/chromium"));

/** Launches the one headless browser a test file uses. */
export function launchBrowser(): Promise<Browser> {
  mkdirSync(ARTIFACTS, { recursive: true });
  return chromium.launch({
    executablePath: CHROMIUM,
    args: [
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
    ],
  });
}

/** A turn long enough to be folded on the entry page. */
export const LONG_PROMPT = `Here is the outline to follow:\n${Array.from({ length: 40 }, (_, i) => `${i + 1}. section ${i + 1} of the reports API`).join("\n")}`;

/** What the seeded repository holds, for the assertions. */
export interface Seeded {
  csvRoot: string;
  csvPart2: string;
  csvAnswered: string;
  xss: string;
  pending: string;
  docs: string;
}

export const XSS_PROMPT =
  'Fix the login <script>window.__pwned="script"</script> <img src=x onerror="window.__pwned=\'img\'"> see [here](javascript:window.__pwned="link")';
export const XSS_TITLE = '<img src=x onerror="window.__pwned=\'title\'">Fix <script>window.__pwned="t2"</script> login';

/** Who committed the docs session's work (the other sessions are the test environment's committer's). */
export const DOCS_AUTHOR = { name: "Dana Writer", email: "dana@example.com" };

/**
 * Commits with real git, each at least a second after the last (git dates have whole seconds and the seeding is
 * fast), so the order by commit date is the order of the story whichever date the timeline orders by. Never in the
 * past: the commit detector reads recent reflog lines only. The caller deletes GIT_COMMITTER_DATE and
 * GIT_AUTHOR_DATE from `repo.env` when the story is told.
 */
export function storyCommits(repo: TempRepo): (message: string, files: Record<string, string>) => { hash: string; stdout: string } {
  let last = 0;
  return (message, files) => {
    last = Math.max(Math.floor(Date.now() / 1000), last + 1);
    const at = `${last} +0000`;
    repo.env.GIT_COMMITTER_DATE = at;
    repo.env.GIT_AUTHOR_DATE = at;
    return agentCommit(repo, message, files);
  };
}

/**
 * Three sessions: a request answered by three commits (the third after the agent's question), a bug fix
 * whose prompt, reply and summary carry XSS payloads plus a commit the agent never summarised, and a docs
 * change on another branch.
 */
export async function seedRepo(repo: TempRepo): Promise<Seeded> {
  binary();
  const env = (id: string) => ({ CLAUDE_SESSION_ID: id });
  const ok = (r: { code: number; stderr: string }) => {
    if (r.code !== 0) throw new Error(r.stderr);
  };
  const commit = storyCommits(repo);

  const a = session(repo, "sess-alpha-0001");
  await a.prompt("Add a CSV export to the reports page");
  const c1 = commit("feat: reports CSV export", { "src/reports/export.ts": "export const csv = 1;\n" });
  ok(await a.bash('git commit -am "feat: reports CSV export"', c1.stdout));
  const c2 = commit("test: CSV export", { "test/export.test.ts": "test\n" });
  ok(await a.bash('git commit -am "test: CSV export"', c2.stdout));
  await a.stop("Export added. Should the header row be localised?");
  ok(await a.ask());
  await a.prompt("Yes, localise it");
  const c3 = commit("feat: localised CSV header", { "src/reports/header.ts": "export const h = 1;\n" });
  ok(await a.bash('git commit -am "feat: localised CSV header"', c3.stdout));
  ok(
    await capture(
      repo,
      [
        "--commit-hash", c1.hash, "--title", "Add CSV export to reports", "--tag", "FEATURE",
        "--intent", "Reports could only be printed.\n\n- adds `exportCsv()`\n- **streams** rows\n\nSee [RFC 4180](https://www.rfc-editor.org/rfc/rfc4180).",
        "--alternatives", "A library: *too heavy* for one format.",
        "--diff-summary", "- src/reports/export.ts: the exporter",
      ],
      env("sess-alpha-0001"),
    ),
  );
  ok(await capture(repo, ["--commit-hash", c2.hash, "--title", "Test the CSV export", "--tag", "TEST", "--intent", "Cover quoting."], env("sess-alpha-0001")));
  ok(await capture(repo, ["--commit-hash", c3.hash, "--title", "Localise the CSV header", "--tag", "FEATURE", "--intent", "The user asked for it."], env("sess-alpha-0001")));
  await a.end();

  const b = session(repo, "sess-beta-0002");
  await b.prompt(XSS_PROMPT);
  const x = commit("fix: login redirect", { "src/auth/login.ts": "export const login = 1;\n" });
  ok(await b.bash('git commit -am "fix: login redirect"', x.stdout));
  await b.stop('Done. <iframe src="javascript:window.__pwned=\'reply\'"></iframe> [docs](javascript:window.__pwned="reply-link")');
  ok(
    await capture(
      repo,
      [
        "--commit-hash", x.hash, "--title", XSS_TITLE, "--tag", "BUGFIX",
        "--intent", 'Redirect loop. <b onmouseover="window.__pwned=\'intent\'">bold</b> [evil](javascript:window.__pwned="md")',
      ],
      env("sess-beta-0002"),
    ),
  );
  await b.prompt("Also log failed logins");
  const p = commit("feat: log failed logins", { "src/auth/audit.ts": "export const audit = 1;\n" });
  ok(await b.bash('git commit -am "feat: log failed logins"', p.stdout));
  await b.end();

  repo.git("checkout", "-q", "-b", "feature/docs");
  const g = session(repo, "sess-gamma-0003");
  await g.prompt("Document the reports API");
  await g.prompt(LONG_PROMPT);
  // another person: the committer git records is who the entry names
  const me = { name: repo.env.GIT_COMMITTER_NAME!, email: repo.env.GIT_COMMITTER_EMAIL! };
  Object.assign(repo.env, { GIT_COMMITTER_NAME: DOCS_AUTHOR.name, GIT_COMMITTER_EMAIL: DOCS_AUTHOR.email });
  const d = commit("docs: reports API", { "docs/api.md": "# API\n" });
  Object.assign(repo.env, { GIT_COMMITTER_NAME: me.name, GIT_COMMITTER_EMAIL: me.email });
  ok(await g.bash('git commit -am "docs: reports API"', d.stdout));
  ok(await capture(repo, ["--commit-hash", d.hash, "--title", "Document the reports API", "--tag", "DOCS", "--intent", "Readers asked."], env("sess-gamma-0003")));
  await g.end();
  repo.git("checkout", "-q", "main");
  delete repo.env.GIT_COMMITTER_DATE;
  delete repo.env.GIT_AUTHOR_DATE;

  return { csvRoot: c1.hash, csvPart2: c2.hash, csvAnswered: c3.hash, xss: x.hash, pending: p.hash, docs: d.hash };
}

/** A running `aiflare ui`: its URL (token included) and how to stop it. */
export interface RunningUi {
  url: string;
  origin: string;
  token: string;
  stop(): Promise<void>;
}

/** Starts `aiflare ui --no-open --port 0` (or with `open`, letting it open a browser) in `cwd`; waits for its URL. */
export async function startUi(cwd: string, env: Record<string, string>, open = false): Promise<RunningUi> {
  const proc = Bun.spawn([binary(), "ui", ...(open ? [] : ["--no-open"]), "--port", "0"], { cwd, env, stdout: "pipe", stderr: "pipe" });
  const reader = proc.stdout.getReader();
  let out = "";
  const deadline = Date.now() + 20_000;
  while (!/https?:\/\/\S+/.test(out)) {
    if (Date.now() > deadline) throw new Error(`aiflare ui printed no URL: ${out}`);
    const { value, done } = await reader.read();
    if (done) throw new Error(`aiflare ui exited: ${out}${await new Response(proc.stderr).text()}`);
    out += new TextDecoder().decode(value);
  }
  reader.releaseLock();
  const url = /https?:\/\/\S+/.exec(out)![0];
  const u = new URL(url);
  return {
    url,
    origin: u.origin,
    token: /^#token=([\w-]+)$/.exec(u.hash)?.[1] ?? "",
    async stop() {
      proc.kill("SIGTERM");
      await proc.exited;
    },
  };
}

/** What a listener on another port received: each request's URL and headers. */
export interface Received {
  url: string;
  headers: Record<string, string>;
}

/**
 * Another program's listener on 127.0.0.1 (any port but the dashboard's): it records every request it gets and
 * answers a blank page, as a local process that a web page sends the browser to would.
 */
export function otherListener(): { port: number; received: Received[]; stop(): void } {
  const received: Received[] = [];
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    fetch(req) {
      received.push({ url: req.url, headers: Object.fromEntries(req.headers) });
      return new Response("<!doctype html><title>elsewhere</title><p>elsewhere</p>", { headers: { "Content-Type": "text/html" } });
    },
  });
  return { port: server.port!, received, stop: () => void server.stop(true) };
}

/**
 * Sends `page` (signed in to a dashboard) to another port of 127.0.0.1 and of localhost, then back, and returns
 * what the listener there received, for checking that nothing usable got there.
 */
export async function visitOtherPort(page: Page): Promise<Received[]> {
  const other = otherListener();
  try {
    for (const host of ["127.0.0.1", "localhost"]) {
      const target = `http://${host}:${other.port}/collect?from=dashboard`;
      await page.evaluate((t) => {
        (globalThis as unknown as { location: { href: string } }).location.href = t;
      }, target);
      await page.waitForURL(target);
      await page.goBack();
    }
    if (other.received.length < 2) throw new Error(`the other listener saw ${other.received.length} requests`);
    return other.received;
  } finally {
    other.stop();
  }
}

/** The request headers a listener received, ready to be sent again (Host and the hop-by-hop ones left out). */
export function replayable(r: Received): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(r.headers)) if (!["host", "connection", "content-length"].includes(k)) out[k] = v;
  return out;
}

/** A running `aiflare serve` (the compiled binary, SQLite) with one project: its origin, the project's key. */
export interface RunningServe {
  origin: string;
  key: string;
  stop(): Promise<void>;
}

/**
 * Creates a project in `db` (a SQLite file or a PostgreSQL URL; its key issued to `owner`, if named) and starts
 * `aiflare serve --port 0` on it, from `cwd`, with `extra` arguments.
 */
export async function startServe(db: string, cwd: string, env: Record<string, string>, owner?: string, extra: string[] = []): Promise<RunningServe> {
  const ownerArgs = owner ? ["--owner", owner] : [];
  const created = await runBin(["serve", "project", "create", "reports", ...ownerArgs, "--json", "--database", db], { cwd, env });
  if (created.code !== 0) throw new Error(`serve project create failed: ${created.stderr}`);
  const key = JSON.parse(created.stdout).key as string;
  const proc = Bun.spawn([binary(), "serve", "--port", "0", "--database", db, ...extra], { cwd, env, stdout: "pipe", stderr: "pipe" });
  const reader = proc.stdout.getReader();
  let out = "";
  while (!/listening on http:\/\/\S+/.test(out)) {
    const { done, value } = await reader.read();
    if (done) throw new Error(`aiflare serve exited: ${out}${await new Response(proc.stderr).text()}`);
    out += new TextDecoder().decode(value);
  }
  // keep the log pipe drained
  const drain = (async () => {
    while (!(await reader.read()).done);
  })();
  return {
    origin: new URL(/listening on (http:\/\/\S+)/.exec(out)![1]!).origin,
    key,
    async stop() {
      proc.kill("SIGTERM");
      await proc.exited;
      await drain;
    },
  };
}

/** Signs `page` in to the team dashboard at `origin` with `key` and waits for the first screen. */
export async function signInTeam(page: Page, origin: string, key: string): Promise<void> {
  await page.goto(`${origin}/`);
  await page.waitForSelector("form.signin");
  await page.fill("#key", key);
  await page.click("form.signin button[type=submit]");
  await page.waitForSelector("body[data-ready='1'] main :is(.session-card, .status)");
}

/**
 * Moves a dashboard tab (signed in, first screen drawn) to `route` and waits until that route is drawn and `ready`
 * shows. The same route again is drawn afresh.
 */
export async function showRoute(page: Page, route: string, ready: string): Promise<void> {
  if ((await page.evaluate(() => (globalThis as unknown as { location: { hash: string } }).location.hash)) === route) {
    await page.evaluate(() => ((globalThis as unknown as { location: { hash: string } }).location.hash = "#/__reset"));
  }
  await page.evaluate((r) => {
    const g = globalThis as unknown as { document: { body: { dataset: Record<string, string> } }; location: { hash: string } };
    g.document.body.dataset.route = "";
    g.location.hash = r;
  }, route);
  await page.waitForFunction((r) => (globalThis as unknown as { document: { body: { dataset: Record<string, string> } } }).document.body.dataset.route === r, route);
  await page.waitForSelector(ready);
}
