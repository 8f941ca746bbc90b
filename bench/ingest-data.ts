/**
 * Realistic team-server entries for the ingest benchmarks: about 5 KB each, their deltas stretches of the real
 * conversations in test/fixtures/claude-code, redacted as the client redacts them before sending; one entry in
 * `secretEvery` holds one secret (a GitHub token in a prompt), as an older or forged client might send.
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { assistantText } from "../src/core/transcript.ts";
import { redactValueForWrite } from "../src/redact/index.ts";
import type { Entry } from "../src/store/entry.ts";
import { makeEntry } from "../test/sync-fixtures.ts";

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

let lines: { role: "user" | "assistant"; content: string }[] | undefined;
let at = 0;

/** A token of a GitHub personal-access-token shape, different for each n (not a real one). */
function fakeToken(n: number): string {
  return `ghp_${hash(`token ${n}`).slice(0, 36)}`;
}

/** Entry number `n` (distinct commit hashes for distinct `n` and `salt`); every `secretEvery`th holds a secret. */
export function benchEntry(n: number, opts: { salt?: string; secretEvery?: number } = {}): Entry {
  lines ??= conversation();
  let snippet = "";
  let first = "";
  const secret = opts.secretEvery !== undefined && opts.secretEvery > 0 && n % opts.secretEvery === 0;
  while (snippet.length < 3800) {
    const l = lines[at++ % lines.length]!;
    first ||= l.content;
    snippet += `${JSON.stringify(l)}\n`;
  }
  const entry = redactValueForWrite(
    makeEntry(hash(`ingest ${opts.salt ?? ""} ${n}`), {
    title: first.replace(/\s+/g, " ").slice(0, 50),
    intent: `Problem: ${first.slice(0, 200)}\nSolution: the change below.\nEffect: the request is done.`,
    diffSummary: `- src/module${n % 40}/file${n % 400}.ts: the change\n- test/module${n % 40}.test.ts: its test`,
    changedFiles: [`src/module${n % 40}/file${n % 400}.ts`, `test/module${n % 40}.test.ts`],
    claudeSessionId: `bench-${n % 50}`,
    committedAt: new Date(Date.UTC(2026, 0, 1) + n * 60_000).toISOString(),
    capturedAt: new Date(Date.UTC(2026, 0, 1) + n * 60_000 + 1000).toISOString(),
    conversationSnippet: snippet,
    }),
  );
  if (secret) entry.conversationSnippet += `${JSON.stringify({ role: "user", content: `use this token: ${fakeToken(n)} for the API` })}\n`;
  return entry;
}
