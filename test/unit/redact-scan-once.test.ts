/**
 * Many strings scanned at once (src/redact/quiet.ts) against each string redacted alone: identical output on the
 * labelled corpus, the evasion samples and every real transcript and payload in test/fixtures.
 */
import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { keywordHits } from "../../src/redact/engine.ts";
import { findAllSpans, hiddenSpans } from "../../src/redact/hidden.ts";
import { redactHome } from "../../src/redact/home.ts";
import { assertNoHardSecret, redactValueForWrite, redactValuesForWrite } from "../../src/redact/index.ts";
import { redactValueString, type HardCheck } from "../../src/redact/jsonl.ts";
import { compileOptions, defaultRuleSet } from "../../src/redact/options.ts";
import { scanStrings } from "../../src/redact/quiet.ts";
import { evasionCases, homeCases } from "../fixtures/secrets/evasion.ts";
import { FIXTURES_DIR as FIXTURES, filesUnder as files } from "../fixtures/files.ts";

/** A file's values: each JSON line parsed (a line that is not JSON as a string), or the whole text. */
function valuesOf(path: string): unknown[] {
  const text = readFileSync(path, "utf8");
  if (path.endsWith(".json")) {
    try {
      return [JSON.parse(text)];
    } catch {
      return [text];
    }
  }
  return text.split("\n").map((line) => {
    try {
      return JSON.parse(line);
    } catch {
      return line;
    }
  });
}

/** The sets of values compared: each fixture file, the corpus positives, the evasion samples. */
function cases(): { name: string; values: unknown[] }[] {
  const out: { name: string; values: unknown[] }[] = [];
  for (const f of files(join(FIXTURES, "claude-code"))) if (/\.jsonl?$/.test(f)) out.push({ name: f, values: valuesOf(f) });
  for (const f of files(join(FIXTURES, "agents"))) if (/\.jsonl?$/.test(f)) out.push({ name: f, values: valuesOf(f) });
  const secrets = join(FIXTURES, "secrets");
  for (const f of [...files(join(secrets, "negatives")), ...files(join(secrets, "code"))]) out.push({ name: f, values: valuesOf(f) });
  const positives = readFileSync(join(secrets, "positives.jsonl"), "utf8").split("\n").filter(Boolean).map((l) => JSON.parse(l) as { text: string });
  out.push({ name: "positives", values: positives.map((p) => ({ text: p.text, content: p.text.split("\n") })) });
  out.push({ name: "evasions", values: evasionCases().map((e) => ({ prompt: e.text, apiKey: e.text })) });
  out.push({ name: "homes", values: homeCases().map((h) => h.text) });
  return out;
}

/** Stage two as redactForWrite runs it, for the reference. */
const check: HardCheck = (text) => {
  try {
    assertNoHardSecret(text);
    return undefined;
  } catch (err) {
    return { kind: String((err as { data?: { kind?: string } }).data?.kind), line: 1 };
  }
};

/** Each string redacted alone, as before strings were scanned together; "refused" when stage two would refuse. */
function reference(value: unknown): unknown {
  const c = compileOptions();
  const walk = (x: unknown, key: string | undefined): unknown => {
    if (typeof x === "string") return redactValueString(x, c, key, check).text;
    if (Array.isArray(x)) return x.map((item) => walk(item, key));
    if (x && typeof x === "object") return Object.fromEntries(Object.entries(x).map(([k, v]) => [k, walk(v, k)]));
    return x;
  };
  try {
    return walk(value, undefined);
  } catch {
    return "refused";
  }
}

function together(values: unknown[]): unknown[] {
  try {
    return redactValuesForWrite(values).values;
  } catch {
    return ["refused"];
  }
}

describe("strings scanned together", () => {
  const all = cases();

  test("the fixtures are all there", () => {
    expect(all.length).toBeGreaterThan(40);
    expect(all.reduce((n, c) => n + JSON.stringify(c.values).length, 0)).toBeGreaterThan(10_000_000);
  });

  test("every value redacted as each of its strings alone redacts it", () => {
    const differ: string[] = [];
    for (const c of all) {
      const refs = c.values.map(reference);
      // one refused value refuses the whole call: then compare value by value
      const got = refs.includes("refused") ? c.values.map((v) => together([v])[0]) : together(c.values);
      for (let i = 0; i < c.values.length; i++) {
        if (JSON.stringify(got[i]) !== JSON.stringify(refs[i])) differ.push(`${c.name} #${i}`);
      }
    }
    expect(differ).toEqual([]);
  }, 300_000);

  test("what the joined scans find in each string is what scanning it alone finds", () => {
    const set = defaultRuleSet();
    const wrong: string[] = [];
    for (const c of all) {
      const strings: string[] = [];
      const collect = (x: unknown): void => {
        if (typeof x === "string") strings.push(x);
        else if (x && typeof x === "object") for (const v of Object.values(x)) collect(v);
      };
      c.values.forEach(collect);
      const { quiet, scans } = scanStrings(strings, set);
      strings.forEach((s, i) => {
        if (quiet[i] === 1) {
          if (findAllSpans(s, set).length > 0 || redactHome(s) !== s) wrong.push(`${c.name}: quiet string has a span`);
          return;
        }
        const scan = scans.get(s)!;
        const hits = [...keywordHits(s, set)].sort((a, b) => a[0] - b[0]);
        if (JSON.stringify([...scan.hits].sort((a, b) => a[0] - b[0])) !== JSON.stringify(hits)) wrong.push(`${c.name}: hits of ${s.slice(0, 40)}`);
        if (JSON.stringify(scan.hidden) !== JSON.stringify(hiddenSpans(s, set, undefined))) wrong.push(`${c.name}: hidden of ${s.slice(0, 40)}`);
      });
    }
    expect(wrong).toEqual([]);
  }, 300_000);

  test("a secret is never made of the end of one string and the start of the next", () => {
    const token = "ghp_0123456789abcdefABCDEF0123456789abcd";
    const { values } = redactValuesForWrite([{ a: token.slice(0, 20), b: token.slice(20) }, `token ${token}`]);
    expect(values).toEqual([{ a: token.slice(0, 20), b: token.slice(20) }, "token <REDACTED:github-pat>"]);
  });

  test("a string holding NUL is redacted as well as any other", () => {
    const token = "ghp_0123456789abcdefABCDEF0123456789abcd";
    const { values, changed } = redactValuesForWrite(["plain", `a\0${token}`, "/home/alice/x"]);
    expect(values).toEqual(["plain", "a\0<REDACTED:github-pat>", "~/x"]);
    expect(changed).toEqual([false, true, true]);
  });

  test("strings holding JSON lines are left out of the joined scan and redacted on their own, the rest as before", () => {
    const token = "ghp_0123456789abcdefABCDEF0123456789abcd";
    const snippet = (extra: string) =>
      [JSON.stringify({ role: "user", content: `use ${token} from /home/alice${extra}` }), JSON.stringify({ role: "assistant", content: "done" }), "plain line"].join("\n");
    const entry = (extra: string) => ({
      title: "Retry uploads",
      intent: `keep ${token} out`,
      changedFiles: ["src/a.ts", "/home/alice/b.ts"],
      conversationSnippet: snippet(extra),
      notes: "nothing here",
    });
    // a NUL inside the JSON lines no longer keeps the other strings from the joined scan: same output either way
    for (const value of [entry(""), entry("\0 and a NUL")]) {
      const { values, changed } = redactValuesForWrite([value, "clean text", { conversationSnippet: snippet("") }]);
      expect(values).toEqual([reference(value), reference("clean text"), reference({ conversationSnippet: snippet("") })]);
      expect(changed).toEqual([true, false, true]);
      expect(JSON.stringify(values)).not.toContain("0123456789abcdefABCDEF");
    }
  });

  test("a value under a secret-like key, and JSON lines inside a string, still get their own treatment", () => {
    const line = String.raw`{"content":"my \u0067hp_0123456789abcdefABCDEF0123456789abcd"}`;
    const out = redactValueForWrite({ apiKey: "Xq7pL2mN9vR4tY8w", notes: `see below\n${line}` });
    expect(out.apiKey).toBe("<REDACTED:key-assignment>");
    expect(out.notes).toBe(redactValueString(`see below\n${line}`, compileOptions()).text);
    expect(out.notes).not.toContain("0123456789abcdefABCDEF");
  });
});
