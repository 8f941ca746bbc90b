/**
 * Secrets written to dodge a scanner (glued to `_`, split by line breaks, encoded, near-miss lengths, zero-width
 * characters) and home directories after JSON escapes, fed through every path of the compiled binary: `aiflare
 * redact`, the hooks (user-prompt-submit, stop, a real git commit seen by post-tool-use, session-end), `aiflare
 * capture` and `aiflare sync` to a backend on 127.0.0.1. Then every object reachable from every aiflare branch,
 * whatever their layout, and every request body are read back and searched for each secret.
 */
import { afterEach, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { binary, runBin, tempRepo, type TempRepo } from "../helpers.ts";
import { evasionCases, homeCases, type EvasionCase } from "../fixtures/secrets/evasion.ts";
import { startBackend, writeConfig, type Backend } from "../sync-fixtures.ts";
import { agentCommit, aiflareObjects, capture, fsckClean, session } from "./capture-support.ts";

setDefaultTimeout(60_000);

const CASES = evasionCases();
const HOMES = homeCases();
const API_KEY = "afk_test_evasion_key_0001";

/** The case texts, one paragraph each, as a person would paste them. */
const ALL = CASES.map((c) => `${c.name}:\n${c.text}`).join("\n\n");
const ALL_HOMES = HOMES.map((h) => h.text).join("\n");

/** Each form a string takes in stored JSON: as is, JSON-escaped once and twice (JSONL inside a JSON field). */
const forms = (s: string) => {
  const once = JSON.stringify(s).slice(1, -1);
  return [s, once, JSON.stringify(once).slice(1, -1)];
};

/** Names of the cases (and home directories) any of whose needles is in `text`. */
function leaks(text: string): string[] {
  const found = CASES.filter((c: EvasionCase) => c.needles.some((n) => forms(n).some((f) => text.includes(f)))).map((c) => `${c.form}: ${c.name}`);
  for (const h of HOMES) if (forms(h.home).some((f) => text.includes(f))) found.push(`home ${h.home}`);
  return found;
}

const redactions = (text: string) => text.match(/<REDACTED:[a-z0-9.-]+>/g)?.length ?? 0;

let repo: TempRepo | undefined;
let backend: Backend | undefined;

beforeAll(() => {
  binary();
});
afterEach(() => {
  backend?.stop();
  backend = undefined;
  if (repo) expect(fsckClean(repo)).toBe(true);
  repo?.cleanup();
  repo = undefined;
});

describe("the evasion corpus never reaches git or the network", () => {
  test("aiflare redact prints every case redacted, as text and as a JSONL transcript", async () => {
    repo = tempRepo();
    writeFileSync(join(repo.root, "pasted.txt"), `${ALL}\n\n${ALL_HOMES}\n`);
    const r = await runBin(["redact", "pasted.txt"], { cwd: repo.root, env: repo.env });
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(leaks(r.stdout)).toEqual([]);
    expect(redactions(r.stdout)).toBeGreaterThanOrEqual(CASES.length);
    for (const c of CASES) expect(r.stdout).toContain(`${c.name}:\n`);

    const transcript = [...CASES.map((c) => JSON.stringify({ type: "user", message: { role: "user", content: c.text } })), ...HOMES.map((h) => JSON.stringify({ type: "assistant", message: { content: [{ type: "text", text: h.text }] } }))].join("\n");
    const j = await runBin(["redact", "--json"], { cwd: repo.root, env: repo.env, stdin: `${transcript}\n` });
    expect(j.code).toBe(0);
    const out = JSON.parse(j.stdout) as { text: string; findings: { kind: string; line: number }[] };
    expect(leaks(out.text)).toEqual([]);
    // every line is still JSON, and every case's line has a finding
    const lines = out.text.trimEnd().split("\n").map((l) => JSON.parse(l));
    expect(lines).toHaveLength(CASES.length + HOMES.length);
    expect(new Set(out.findings.map((f) => f.line)).size).toBe(CASES.length);
    expect(leaks(j.stdout + j.stderr)).toEqual([]);
  });

  test("hooks, a real commit, capture and sync: no object of any aiflare branch and no request body holds a case", async () => {
    repo = tempRepo();
    writeFileSync(join(repo.root, ".git", "info", "exclude"), "aiflare.yml\n.context-capture/\n");
    const s = session(repo, "sess-evasion-1");
    expect((await s.prompt(`These broke the deploy:\n\n${ALL}\n\nAlso:\n${ALL_HOMES}`)).code).toBe(0);
    expect((await s.stop(`I did not store any of these:\n${ALL}\n${ALL_HOMES}`)).code).toBe(0);

    // file names and the commit message hold secrets glued to `_` (changed files, title)
    const boundary = CASES.filter((c) => c.form === "boundary");
    const aws = boundary.find((c) => c.name === "AWS key id in a file name")!.needles[0]!;
    const stripe = boundary.find((c) => c.name === "Stripe key in a changed file path")!.needles[0]!;
    const commit = agentCommit(repo, `Add creds_${aws}.csv\n\n${boundary.map((c) => c.text).join("\n")}`, {
      [`data/creds_${aws}.csv`]: "id,secret\n",
      [`config/${stripe}_prod.json`]: "{}\n",
    });
    const hook = await s.bash(`git add -A && git commit -m "Add creds"`, commit.stdout);
    expect(hook.code).toBe(0);
    expect(hook.stdout).toContain(commit.hash);

    // the agent's summary, with every case in every text flag and a snippet with home directories after escapes
    const snippet = [
      JSON.stringify({ role: "user", content: ALL }),
      ...HOMES.map((h) => JSON.stringify({ role: "assistant", content: h.text })),
    ].join("\n");
    const cap = await capture(repo, [
      "--commit-hash",
      commit.hash,
      "--claude-session-id",
      "sess-evasion-1",
      "--title",
      CASES.find((c) => c.form === "near-miss")!.text,
      "--intent",
      ALL,
      "--alternatives",
      CASES.filter((c) => c.form === "encoded").map((c) => c.text).join("\n"),
      "--diff-summary",
      `${CASES.filter((c) => c.form === "split").map((c) => c.text).join("\n")}\n${ALL_HOMES}`,
      "--conversation-snippet",
      snippet,
      "--tag",
      "FEATURE",
    ]);
    expect(cap.stderr).toBe("");
    expect(cap.code).toBe(0);
    expect(leaks(cap.stdout)).toEqual([]);

    await s.prompt(`One more: ${CASES.filter((c) => c.form === "zero-width").map((c) => c.text).join(" ")}`);
    const end = await s.end();
    expect(end.code).toBe(0);

    const stored = aiflareObjects(repo);
    expect(stored.refs.length).toBeGreaterThanOrEqual(2);
    expect(stored.count).toBeGreaterThanOrEqual(8);
    expect(leaks(stored.text)).toEqual([]);
    // what was stored is the redacted text, not nothing: the snippet's home directories became ~
    expect(redactions(stored.text)).toBeGreaterThanOrEqual(CASES.length * 2);
    expect(stored.text).toContain("~/project/src/app.ts");
    expect(stored.text).toContain("~/work/api");

    // sync sends the entry and the transcript to a backend on 127.0.0.1
    backend = startBackend();
    writeConfig(repo.root, backend.url, API_KEY);
    const sync = await runBin(["sync", "--json"], { cwd: repo.root, env: repo.env });
    expect(sync.stderr).toBe("");
    expect(sync.code).toBe(0);
    expect(backend.captures().map((e) => e.commitHash)).toEqual([commit.hash]);
    expect(backend.sessions()).toHaveLength(1);
    expect(backend.received.length).toBeGreaterThanOrEqual(2);
    for (const req of backend.received) expect(leaks(JSON.stringify(req.body))).toEqual([]);
    const [entry] = backend.captures();
    expect(redactions(entry.intent)).toBeGreaterThanOrEqual(CASES.length);
    expect(entry.changedFiles).toEqual(expect.arrayContaining(["data/creds_<REDACTED:aws-access-key-id>.csv", "config/<REDACTED:stripe-secret-key>_prod.json"]));
    expect(redactions(backend.sessions()[0]!.content)).toBeGreaterThanOrEqual(CASES.length * 2);
    expect(leaks(sync.stdout)).toEqual([]);
  });
});
