import { describe, expect, test } from "bun:test";
import { Glob } from "bun";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { FIXTURES } from "../helpers.ts";
import { evasionCases } from "../fixtures/secrets/evasion.ts";
import { redactForWrite, redactForWriteStream, redactJsonl, redactJsonlStream } from "../../src/redact/index.ts";

/** `text` cut into chunks of `size` characters (the last one shorter). */
function* chunksOf(text: string, size: number): Generator<string> {
  for (let i = 0; i < text.length; i += size) yield text.slice(i, i + size);
}

/** `text` cut just before, at and just after each of its newlines in turn: the awkward places for a line cutter. */
function* aroundNewlines(text: string, shift: number): Generator<string> {
  let at = 0;
  for (let nl = text.indexOf("\n"); nl !== -1; nl = text.indexOf("\n", nl + 1)) {
    const cut = Math.min(text.length, Math.max(at, nl + shift));
    if (cut > at) yield text.slice(at, cut);
    at = cut;
  }
  if (at < text.length) yield text.slice(at);
}

async function streamed(chunks: Iterable<string>): Promise<{ text: string; findings: { kind: string; line: number }[]; pieces: number }> {
  const texts: string[] = [];
  const findings: { kind: string; line: number }[] = [];
  for await (const p of redactJsonlStream(chunks)) {
    texts.push(p.text);
    findings.push(...p.findings);
  }
  return { text: texts.join("\n"), findings, pieces: texts.length };
}

const transcripts = [...new Glob("**/*.jsonl").scanSync(FIXTURES)].sort();

/** The evasion corpus as a transcript would hold it: each case as plain text lines and inside a JSON line. */
function evasionText(): string {
  return evasionCases()
    .map((c, i) => `${JSON.stringify({ i, content: c.text })}\n${c.text}\n${i % 3 ? "" : "\n"}`)
    .join("");
}

const SIZES = [1, 7, 64, 1000, 4096, 65_537, 1 << 20];

describe("redactJsonlStream", () => {
  test("has real transcripts to compare", () => {
    expect(transcripts.length).toBeGreaterThanOrEqual(10);
  });

  for (const rel of transcripts) {
    test(`streamed output equals the whole text's: claude-code/${rel}`, async () => {
      const text = readFileSync(join(FIXTURES, rel), "utf8");
      const whole = redactJsonl(text);
      // chunks of one character are slow on megabytes; the larger sizes still cut mid-line and mid-character-pair
      const sizes = SIZES.filter((s) => s * 20_000 >= text.length);
      for (const size of sizes) {
        const s = await streamed(chunksOf(text, size));
        expect(s.text).toBe(whole.text);
        expect(s.findings).toEqual(whole.findings);
      }
      for (const shift of [-1, 0, 1]) {
        const s = await streamed(aroundNewlines(text, shift));
        expect(s.text).toBe(whole.text);
        expect(s.findings).toEqual(whole.findings);
      }
    });
  }

  test("streamed output equals the whole text's on the evasion corpus, at every chunk size and newline cut", async () => {
    const text = evasionText();
    const whole = redactJsonl(text);
    expect(whole.findings.length).toBeGreaterThan(0);
    for (const size of [...SIZES, 2, 3, 5, 11, 17, 31]) {
      const s = await streamed(chunksOf(text, size));
      expect(s.text).toBe(whole.text);
      expect(s.findings).toEqual(whole.findings);
    }
    for (const shift of [-2, -1, 0, 1, 2]) {
      const s = await streamed(aroundNewlines(text, shift));
      expect(s.text).toBe(whole.text);
      expect(s.findings).toEqual(whole.findings);
    }
    for (const c of evasionCases()) for (const n of c.needles) expect(whole.text).not.toContain(n);
  });

  test("never cuts inside lines that are not JSON: a PEM key in plain text split across chunks is still redacted", async () => {
    const pem = `-----BEGIN RSA PRIVATE KEY-----\n${"MIIEowIBAAKCAQEA0Z3VS5JJcds3xfn/ygWyF8PbnGy0AHB7MhgHcTz6sE2I2yPB\n".repeat(6)}-----END RSA PRIVATE KEY-----`;
    const text = `${JSON.stringify({ a: 1 })}\nkey:\n${pem}\n${JSON.stringify({ b: "x" })}\n`;
    const whole = redactJsonl(text);
    expect(whole.text).not.toContain("MIIEowIBAAKCAQEA");
    for (const size of [1, 5, 40, 70]) {
      const s = await streamed(chunksOf(text, size));
      expect(s.text).toBe(whole.text);
      expect(s.findings).toEqual(whole.findings);
    }
    // cut after each JSON line only: the first line; the key's block with the JSON line after it; the empty rest
    expect((await streamed(chunksOf(text, 5))).pieces).toBe(3);
  });

  test("empty input, no final newline, and a file of only text are the same streamed", async () => {
    for (const text of ["", "x", "{}", "{}\n", "a\nb\n", `{"p":"/home/alice/x"}\n{"q":1}`, "\n\n{}\n\n"]) {
      for (const size of [1, 2, 100]) expect((await streamed(chunksOf(text, size))).text).toBe(redactJsonl(text).text);
    }
  });
});

describe("redactForWriteStream", () => {
  test("joined, equals redactForWrite of the whole text", async () => {
    const text = evasionText();
    for (const size of [3, 100, 4096]) {
      let out = "";
      for await (const t of redactForWriteStream(chunksOf(text, size))) out += t;
      expect(out).toBe(redactForWrite(text, { jsonl: true }));
    }
  });

  test("refuses an allowlisted hard secret with its line in the whole input, after yielding only what came before", async () => {
    const aws = "AKIAQWERTYUIOPASDF23";
    const text = `${JSON.stringify({ a: "ok" })}\n${JSON.stringify({ b: "ok" })}\n${JSON.stringify({ c: `k ${aws}` })}\n`;
    const yielded: string[] = [];
    let err: unknown;
    try {
      for await (const t of redactForWriteStream(chunksOf(text, 12), { allow: [aws] })) yielded.push(t);
    } catch (e) {
      err = e;
    }
    expect((err as { code?: string }).code).toBe("REDACTION_REFUSED");
    expect((err as { data?: { line?: number } }).data?.line).toBe(3);
    expect(yielded.join("")).not.toContain(aws);
    expect(yielded.length).toBeGreaterThan(0);
  });
});
