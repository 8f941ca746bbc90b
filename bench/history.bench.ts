/**
 * History figures (issue 5): `history list` over 10,000 entries with a warm index and after the index was
 * deleted, an incremental update, and `why` on a file with 1,000 commits. Baseline: a `git log -1` process.
 */
import { rmSync } from "node:fs";
import { join } from "node:path";
import { makeEntry, writeTimeline } from "../test/timeline-fixture.ts";
import { testEnv } from "../test/helpers.ts";
import { report, sample, tempDir, timeProcess } from "./lib.ts";

const BIN = join(import.meta.dir, "..", "dist", "aiflare");
const dir = tempDir();
const home = join(dir, "home");
const root = join(dir, "repo");
Bun.spawnSync(["mkdir", "-p", home, root]);
const env = testEnv(home);
const git = (...args: string[]) => {
  const r = Bun.spawnSync(["git", ...args], { cwd: root, env });
  if (r.exitCode !== 0) throw new Error(`git ${args.join(" ")}: ${r.stderr}`);
  return r.stdout.toString().trim();
};
git("init", "-q", "-b", "main");

// 1,000 commits that each append a line to src/app.ts, through fast-import.
const COMMITS = 1000;
let stream = "";
let text = "";
for (let i = 1; i <= COMMITS; i++) {
  text += `line ${i}\n`;
  stream += `commit refs/heads/main\nmark :${i}\ncommitter Dev <dev@example.com> ${1_780_000_000 + i * 60} +0000\ndata ${`change ${i}`.length}\nchange ${i}\n`;
  stream += `M 100644 inline src/app.ts\ndata ${Buffer.byteLength(text)}\n${text}\n`;
}
const marks = join(dir, "marks");
let r = Bun.spawnSync(["git", "fast-import", "--quiet", `--export-marks=${marks}`], { cwd: root, env, stdin: Buffer.from(`${stream}done\n`) });
if (r.exitCode !== 0) throw new Error(r.stderr.toString());
git("reset", "-q", "--hard", "main");
const commitHashes = (await Bun.file(marks).text())
  .trim()
  .split("\n")
  .map((l) => l.split(" ")[1]!);

// 10,000 entries: the 1,000 real commits plus 9,000 more, in 500 sessions, with groups and prompts.
const ENTRIES = 10_000;
const entries = Array.from({ length: ENTRIES }, (_, i) => {
  const hash = i < COMMITS ? commitHashes[i]! : new Bun.CryptoHasher("sha1").update(`bench-${i}`).digest("hex");
  const session = Math.floor(i / 20);
  const inGroup = i % 4 !== 0;
  return {
    ...makeEntry({
      commitHash: hash,
      title: `Change number ${i} in the parser and its tests`,
      intent: `**Problem** case ${i} failed.\n**Solution** handle it.\n**Effect** parser accepts it.`,
      alternatives: i % 3 ? "" : "- rewrite the parser: too large",
      diffSummary: `- src/app.ts: handle case ${i}`,
      tag: (["FEATURE", "BUGFIX", "REFACTORING", "TEST", "DOCS"] as const)[i % 5]!,
      changedFiles: ["src/app.ts", `src/mod${i % 50}.ts`],
      claudeSessionId: `bench-session-${session}`,
      capturedAt: new Date(Date.UTC(2026, 0, 1) + i * 60_000).toISOString(),
      conversationSnippet: inGroup
        ? `${JSON.stringify({ role: "assistant", content: `Done with step ${i}.` })}\n`
        : `${JSON.stringify({ role: "user", content: `Please handle parser case ${i}, it breaks on nested input` })}\n${JSON.stringify({ role: "assistant", content: `Handled case ${i}.` })}\n`,
    }),
    groupRootId: null as string | null,
  };
});
for (let i = 0; i < ENTRIES; i++) if (i % 4 !== 0) entries[i]!.groupRootId = entries[i - (i % 4)]!.commitHash;
writeTimeline(root, env, { entries });

const opts = { cwd: root, env };
const indexFile = join(root, ".git", "aiflare", "index.sqlite");
const baseline = sample(20, () => timeProcess(["git", "log", "-1"], opts));
report("baseline: git log -1", baseline);

const cold = sample(
  5,
  () => {
    rmSync(indexFile, { force: true });
    rmSync(`${indexFile}-wal`, { force: true });
    rmSync(`${indexFile}-shm`, { force: true });
    return timeProcess([BIN, "history", "list"], opts);
  },
  0,
);
report("history list, 10,000 entries, index deleted", cold, baseline, "≤ 3000 ms");

const warm = sample(20, () => timeProcess([BIN, "history", "list"], opts));
report("history list, 10,000 entries, warm", warm, baseline, "≤ 50 ms");
const warmAll = sample(10, () => timeProcess([BIN, "history", "list", "--limit", "0"], opts));
report("history list --limit 0 (all 10,000), warm", warmAll, baseline);
const warmJson = sample(5, () => timeProcess([BIN, "history", "list", "--json"], opts));
report("history list --json (all 10,000), warm", warmJson, baseline);
const grep = sample(10, () => timeProcess([BIN, "history", "list", "--grep", "nested", "--limit", "50"], opts));
report("history list --grep nested --limit 50", grep, baseline);

let n = ENTRIES;
const incremental = sample(
  5,
  () => {
    const i = n++;
    writeTimeline(root, env, {
      entries: [makeEntry({ commitHash: new Bun.CryptoHasher("sha1").update(`bench-${i}`).digest("hex"), capturedAt: new Date().toISOString() })],
    });
    return timeProcess([BIN, "history", "list", "--limit", "50"], opts);
  },
  0,
);
report("history list after 1 new entry (incremental)", incremental, baseline);

const why = sample(20, () => timeProcess([BIN, "why", "src/app.ts"], opts));
report("why src/app.ts (1,000 commits)", why, baseline, "≤ 300 ms");
const whyLines = sample(5, () => timeProcess([BIN, "why", "src/app.ts:10-20"], opts), 1);
report("why src/app.ts:10-20 (git log -L)", whyLines, baseline);

if (process.env.KEEP) console.log(dir); else rmSync(dir, { recursive: true, force: true });
