/**
 * What the server's own redaction pass costs on its write path: the request handler of `aiflare serve` over SQLite,
 * batches of 100 entries of about 5 KB built from the real transcripts in test/fixtures/claude-code, stored with and
 * without the redactor (rounds interleaved, so that a busy machine weighs on both alike). Goal: with ≥ 80% of the
 * entries/s of without.
 */
import { readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { join } from "node:path";
import { assistantText } from "../src/core/transcript.ts";
import { createProject } from "../src/server/admin.ts";
import { createApp } from "../src/server/app.ts";
import { openSqlite } from "../src/server/sqlite/index.ts";
import { makeEntry } from "../test/sync-fixtures.ts";
import { median, tempDir } from "./lib.ts";

const ROUNDS = 6;
const BATCHES = 20;
const PER_BATCH = 100;
const hash = (s: string) => new Bun.CryptoHasher("sha1").update(s).digest("hex");

/** The user prompts and assistant replies of the fixture transcripts, in order. */
function conversation(): { role: "user" | "assistant"; content: string }[] {
  const files: string[] = [];
  const walk = (dir: string) => {
    for (const name of readdirSync(dir)) {
      const p = join(dir, name);
      if (statSync(p).isDirectory()) walk(p);
      else if (name.endsWith(".jsonl")) files.push(p);
    }
  };
  walk(join(import.meta.dir, "..", "test", "fixtures", "claude-code"));
  const out: { role: "user" | "assistant"; content: string }[] = [];
  for (const f of files.sort()) {
    for (const text of readFileSync(f, "utf8").split("\n")) {
      let rec: any;
      try {
        rec = JSON.parse(text);
      } catch {
        continue;
      }
      const reply = assistantText(rec);
      if (reply) out.push({ role: "assistant", content: reply.slice(0, 1500) });
      else if (rec?.type === "user" && typeof rec.message?.content === "string" && rec.message.content.trim()) {
        out.push({ role: "user", content: rec.message.content.slice(0, 1500) });
      }
    }
  }
  return out;
}

const lines = conversation();
let at = 0;

/** An entry of about 5 KB: its delta is the next stretch of the fixture conversation. */
function entry(n: number) {
  let snippet = "";
  let first = "";
  while (snippet.length < 3800) {
    const l = lines[at++ % lines.length]!;
    first ||= l.content;
    snippet += `${JSON.stringify(l)}\n`;
  }
  return makeEntry(hash(`ingest ${n}`), {
    title: first.replace(/\s+/g, " ").slice(0, 50),
    intent: `Problem: ${first.slice(0, 200)}\nSolution: the change below.\nEffect: the request is done.`,
    diffSummary: `- src/module${n % 40}/file${n % 400}.ts: the change\n- test/module${n % 40}.test.ts: its test`,
    changedFiles: [`src/module${n % 40}/file${n % 400}.ts`, `test/module${n % 40}.test.ts`],
    claudeSessionId: `bench-${n % 50}`,
    committedAt: new Date(Date.UTC(2026, 0, 1) + n * 60_000).toISOString(),
    capturedAt: new Date(Date.UTC(2026, 0, 1) + n * 60_000 + 1000).toISOString(),
    conversationSnippet: snippet,
  });
}

const dir = tempDir("aiflare-bench-ingest-");
try {
  const modes = await Promise.all(
    [true, false].map(async (redact) => {
      const storage = openSqlite(join(dir, `${redact ? "with" : "without"}.sqlite`));
      await storage.migrate();
      const { key } = await createProject(storage, "bench");
      return { redact, storage, key, handle: await createApp(storage, { rateLimit: 0, redact }), rates: [] as number[] };
    }),
  );
  const bodies = Array.from({ length: ROUNDS * 2 * BATCHES }, (_, b) =>
    JSON.stringify({ captures: Array.from({ length: PER_BATCH }, (_, i) => entry(b * PER_BATCH + i)) }),
  );
  const avg = bodies.reduce((n, b) => n + b.length, 0) / bodies.length / PER_BATCH;
  let next = 0;
  for (let round = 0; round < ROUNDS; round++) {
    for (const m of round % 2 ? modes : [...modes].reverse()) {
      const t0 = performance.now();
      for (let b = 0; b < BATCHES; b++) {
        const res = await m.handle(
          new Request("http://127.0.0.1/api/v1/captures/batch", {
            method: "POST",
            headers: { "content-type": "application/json", "x-api-key": m.key },
            body: bodies[next++],
          }),
        );
        if (res.status !== 200) throw new Error(`batch answered ${res.status}: ${await res.text()}`);
      }
      m.rates.push((BATCHES * PER_BATCH) / ((performance.now() - t0) / 1000));
    }
  }
  const [withRedact, without] = modes as [(typeof modes)[0], (typeof modes)[0]];
  const ratio = median(withRedact.rates) / median(without.rates);
  const row = (name: string, xs: number[]) => `${name.padEnd(40)} median ${Math.round(median(xs)).toString().padStart(6)} entries/s  (rounds: ${xs.map(Math.round).join(", ")})`;
  console.log(`ingest on SQLite, batches of ${PER_BATCH}, entries of ${(avg / 1024).toFixed(1)} KB from test/fixtures transcripts:`);
  console.log(row("without server redaction", without.rates));
  console.log(row("with server redaction", withRedact.rates));
  console.log(`with / without: ${(ratio * 100).toFixed(0)}% (goal ≥ 80%)`);
  for (const m of modes) await m.storage.close();
} finally {
  rmSync(dir, { recursive: true, force: true });
}
