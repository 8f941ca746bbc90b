/**
 * `aiflare import` of 1,000 past Claude Code sessions holding 5,000 agent commits (5 per session; transcripts of
 * ~40 KB each: prompts, replies and the `git commit` calls with git's real `[branch sha] subject` output), into a
 * repository with those 5,000 commits. Prints the wall time, entries per second and peak RSS of the import, and
 * the time of a second run (which must write nothing). Baseline: `git log --all` over the same repository.
 */
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { fmt, peakRss, tempDir } from "./lib.ts";
import { testEnv } from "../test/helpers.ts";

const BIN = resolve(import.meta.dir, "..", "dist", "aiflare");
const SESSIONS = 1000;
const PER_SESSION = 5;
const home = tempDir("aiflare-bench-home-");
const root = tempDir("aiflare-bench-import-");
const env = testEnv(home);

function git(args: string[], stdin?: string): string {
  const r = Bun.spawnSync(["git", ...args], { cwd: root, env, stdin: stdin === undefined ? "ignore" : Buffer.from(stdin) });
  if (r.exitCode !== 0) throw new Error(`git ${args[0]} failed: ${r.stderr.toString()}`);
  return r.stdout.toString().trim();
}

const words = "the retry loop keeps uploads alive when the backend answers 503 under load so we back off with jitter".split(" ");
function prose(n: number, seed: number): string {
  let s = "";
  for (let i = 0; s.length < n; i++) s += `${words[(seed + i * 7) % words.length]} `;
  return s.trim();
}

try {
  git(["init", "-q", "-b", "main"]);
  const t0 = Date.parse("2026-09-01T08:00:00Z") / 1000;
  // 5,000 commits through fast-import, each at a known time
  let script = "";
  const times: number[] = [];
  for (let i = 0; i < SESSIONS * PER_SESSION; i++) {
    const time = t0 + i * 600;
    times.push(time);
    const msg = `Change ${i}: ${prose(40, i)}`;
    const body = `export const v${i} = ${i};\n`;
    script += `commit refs/heads/main\nmark :${i + 1}\ncommitter Bench <bench@example.com> ${time} +0000\ndata ${Buffer.byteLength(msg)}\n${msg}\n`;
    if (i > 0) script += `from :${i}\n`;
    script += `M 100644 inline src/f${i % 200}.ts\ndata ${Buffer.byteLength(body)}\n${body}\n`;
  }
  git(["fast-import", "--quiet"], script);
  git(["reset", "-q", "--hard", "main"]);
  const log = git(["log", "--reverse", "--format=%h %s"]).split("\n");

  const projects = join(home, ".claude", "projects", root.replace(/[^A-Za-z0-9]/g, "-"));
  mkdirSync(projects, { recursive: true });
  let bytes = 0;
  for (let s = 0; s < SESSIONS; s++) {
    const id = `${s.toString(16).padStart(8, "0")}-0000-4000-8000-000000000000`;
    const lines: string[] = [];
    const rec = (o: Record<string, unknown>, t: number) =>
      lines.push(JSON.stringify({ ...o, sessionId: id, cwd: root, gitBranch: "main", timestamp: new Date(t * 1000).toISOString() }));
    for (let j = 0; j < PER_SESSION; j++) {
      const i = s * PER_SESSION + j;
      const t = times[i]!;
      const [short, ...subject] = log[i]!.split(" ");
      rec({ type: "user", message: { role: "user", content: prose(1500, i) } }, t - 300);
      rec({ type: "assistant", message: { role: "assistant", content: [{ type: "text", text: prose(2500, i + 1) }] } }, t - 200);
      rec({ type: "assistant", message: { role: "assistant", content: [{ type: "tool_use", id: `t${i}`, name: "Bash", input: { command: `git add -A && git commit -m "${subject.join(" ")}"` } }] } }, t - 1);
      const out = `[main ${short}] ${subject.join(" ")}\n 1 file changed, 1 insertion(+)\n`;
      rec({ type: "user", message: { role: "user", content: [{ type: "tool_result", tool_use_id: `t${i}`, content: out }] }, toolUseResult: { stdout: out, stderr: "" } }, t + 1);
      rec({ type: "assistant", message: { role: "assistant", content: [{ type: "text", text: prose(3500, i + 2) }] } }, t + 60);
    }
    const text = `${lines.join("\n")}\n`;
    bytes += text.length;
    writeFileSync(join(projects, `${id}.jsonl`), text);
  }
  console.log(`data: ${SESSIONS} sessions, ${SESSIONS * PER_SESSION} commits, transcripts ${(bytes / SESSIONS / 1024).toFixed(1)} KB each (${(bytes / 1e6).toFixed(1)} MB in all)`);

  const b0 = performance.now();
  git(["log", "--all", "--format=%H %ct %s"]);
  const base = performance.now() - b0;

  const run = () => {
    const r = peakRss([BIN, "import", "--json"], { cwd: root, env });
    return { ms: r.ms, rss: r.mb, summary: JSON.parse(r.stdout) as { imported: number; matched: number } };
  };
  const first = run();
  console.log(
    `import, first run: ${fmt(first.ms)} for ${first.summary.imported} entries (${Math.round(first.summary.imported / (first.ms / 1000))} entries/s), ` +
      `peak RSS ${first.rss.toFixed(1)} MB; baseline git log --all ${fmt(base)} (ratio ${(first.ms / base).toFixed(0)}x)`,
  );
  if (first.summary.imported !== SESSIONS * PER_SESSION) console.log(`  ! expected ${SESSIONS * PER_SESSION} entries, matched ${first.summary.matched}`);
  const second = run();
  console.log(`import, second run (nothing to write): ${fmt(second.ms)}, ${second.summary.imported} written, peak RSS ${second.rss.toFixed(1)} MB`);
} finally {
  rmSync(home, { recursive: true, force: true });
  rmSync(root, { recursive: true, force: true });
}
