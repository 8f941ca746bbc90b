/**
 * The redactor's two scans against plain reference implementations kept here: where the keywords start (each
 * keyword searched for on its own) and where the hidden-text scan looks (the regular expression it used to run over
 * every character), on every real text in test/fixtures, every labelled secret and evasion sample, and seeded
 * random text made of what the scans look for (keywords in any case, placeholders, base64 runs around 20
 * characters, escapes, line breaks, zero-width characters, NUL).
 */
import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { keywordHits, type RuleSet } from "../../src/redact/engine.ts";
import { anomalyPlaces, base64Runs, isAnomaly } from "../../src/redact/hidden.ts";
import { defaultRuleSet, hardRuleSet } from "../../src/redact/options.ts";
import { evasionCases, homeCases } from "../fixtures/secrets/evasion.ts";
import { FIXTURES_DIR as FIXTURES, filesUnder as files } from "../fixtures/files.ts";
import { Rand } from "../fixtures/secrets/samples.ts";

/**
 * Real text: the strings of each line of the fixture transcripts and payloads (joined as the server's pass joins
 * them), the other fixture files whole, the labelled secrets, the evasion samples.
 */
function realTexts(): string[] {
  const out: string[] = [];
  const dirs = ["claude-code", "agents", "secrets/negatives", "secrets/code"].map((d) => join(FIXTURES, d));
  for (const f of dirs.flatMap(files)) {
    if (!/\.(jsonl?|txt|md|ts|py|js)$/.test(f)) continue;
    const text = readFileSync(f, "utf8");
    if (!/\.jsonl?$/.test(f)) {
      out.push(text);
      continue;
    }
    for (const line of text.split("\n")) {
      const strings: string[] = [];
      const collect = (x: unknown): void => {
        if (typeof x === "string") strings.push(x);
        else if (x && typeof x === "object") for (const v of Object.values(x)) collect(v);
      };
      try {
        collect(JSON.parse(line));
      } catch {
        strings.push(line);
      }
      if (strings.length > 0) out.push(strings.join("\0"));
    }
  }
  const positives = readFileSync(join(FIXTURES, "secrets", "positives.jsonl"), "utf8").split("\n").filter(Boolean);
  for (const l of positives) out.push((JSON.parse(l) as { text: string }).text);
  for (const e of evasionCases()) out.push(e.text);
  for (const h of homeCases()) out.push(h.text);
  return out;
}

/** Random text from pieces the scans react to, `count` strings of up to `max` pieces. */
function randomTexts(set: RuleSet, seed: number, count: number, max: number): string[] {
  const r = new Rand(seed);
  const b64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/_-";
  const upper = (s: string) => [...s].map((ch) => (r.int(2) ? ch.toUpperCase() : ch)).join("");
  const pieces: (() => string)[] = [
    () => upper(r.pick(set.keywords)),
    () => r.pick(set.keywords).slice(0, 2 + r.int(3)),
    () => `<REDACTED:${r.pick(["aws-access-key-id", "github-pat", "x".repeat(60 + r.int(8)), ""])}>`,
    () => r.chars(b64, 16 + r.int(8)),
    () => r.chars(b64, 1 + r.int(40)),
    () => r.pick(["\\u0067", "\\x67", "\\u200b", "%41", "%20", "%7F", "%zz", "\\n", "\\\n", "\\\r\n  ", "\\", "%"]),
    () => r.pick(["\n", "\r\n", "\r", "\n\n", " \n", "\n "]),
    () => r.pick(["\u00ad", "\u180e", "\u200b", "\u200c", "\u200d", "\u2060", "\u2064", "\ufeff", "\u2065", "\u200a", "é", "—", "\u{1f600}"]),
    () => r.pick(["\0", " ", ".", "=", ":", "\"", "'", "{", "}", "/home/", "Users"]),
    () => r.chars("abcdefghijklmnopqrstuvwxyz", 1 + r.int(9)),
  ];
  return Array.from({ length: count }, () => {
    let s = "";
    for (let k = r.int(max); k >= 0; k--) s += r.pick(pieces)();
    return s;
  });
}

/** ASCII letters lowered, nothing else changed (the scan reads no letter outside ASCII as one of a keyword). */
const lowerAscii = (s: string) => s.replace(/[A-Z]/g, (c) => c.toLowerCase());

/** Where each rule's keywords start, each keyword searched for on its own; none inside a placeholder's kind. */
function referenceHits(text: string, set: RuleSet): [number, number[]][] {
  const lower = lowerAscii(text);
  const hits = new Map<number, Set<number>>();
  for (const i of set.always) hits.set(i, new Set());
  set.keywords.forEach((kw, id) => {
    for (let p = lower.indexOf(kw); p !== -1; p = lower.indexOf(kw, p + 1)) {
      if (/<REDACTED:[a-z0-9._-]{0,64}$/.test(text.slice(Math.max(0, p - 74), p))) continue;
      for (const r of set.keywordRules[id]!) {
        if (!hits.has(r)) hits.set(r, new Set());
        hits.get(r)!.add(p);
      }
    }
  });
  return [...hits].map(([r, ps]) => [r, [...ps].sort((a, b) => a - b)] as [number, number[]]).sort((a, b) => a[0] - b[0]);
}

/** What the scan finds, rules in order (the positions as the scan lists them). */
const scanHits = (text: string, set: RuleSet) => [...keywordHits(text, set)].sort((a, b) => a[0] - b[0]);

/**
 * Where the hidden-text scan used to look, in order: each match of one regular expression over the text (a run of
 * 20 base64 characters or more, or a character that may start an anomaly), the latter kept where `isAnomaly` holds.
 */
function referencePlaces(text: string): string[] {
  const out: string[] = [];
  const re = /[A-Za-z0-9+/_-]{20,}|[\\%\n\r\u00ad-\uffff]/g;
  for (let m = re.exec(text); m !== null; m = re.exec(text)) {
    if (m[0].length > 1) out.push(`base64 ${m.index}-${m.index + m[0].length}`);
    else if (isAnomaly(text, m.index, text.charCodeAt(m.index))) out.push(`anomaly ${m.index}`);
  }
  return out;
}

/** Where the scan looks now: the base64 runs and the anomaly places merged in the order of the text. */
function scanPlaces(text: string): string[] {
  const runs = base64Runs(text);
  const places = [...anomalyPlaces(text)];
  for (let k = 1; k < places.length; k++) if (places[k]! <= places[k - 1]!) throw new Error("anomaly places out of order");
  const out: { at: number; what: string }[] = [];
  for (let k = 0; k < runs.length; k += 2) out.push({ at: runs[k]!, what: `base64 ${runs[k]}-${runs[k + 1]}` });
  for (const p of places) if (isAnomaly(text, p, text.charCodeAt(p))) out.push({ at: p, what: `anomaly ${p}` });
  return out.sort((a, b) => a.at - b.at).map((o) => o.what);
}

describe("the scans against plain references", () => {
  const real = realTexts();

  test("the real texts are all there", () => {
    expect(real.length).toBeGreaterThan(20_000);
    expect(real.reduce((n, t) => n + t.length, 0)).toBeGreaterThan(12_000_000);
  });

  test("keywords start where each searched for alone starts, in order, on real text", () => {
    const set = defaultRuleSet();
    const wrong = real.filter((t) => JSON.stringify(scanHits(t, set)) !== JSON.stringify(referenceHits(t, set)));
    expect(wrong.map((t) => t.slice(0, 60))).toEqual([]);
  }, 120_000);

  test("keywords start where each searched for alone starts, on random text, for a rule set drawn from another too", () => {
    for (const set of [defaultRuleSet(), hardRuleSet()]) {
      const texts = randomTexts(set, 0x5ca1, 10_000, 12);
      expect(texts.filter((t) => scanHits(t, set).length > 0).length).toBeGreaterThan(3_000);
      const wrong = texts.filter((t) => JSON.stringify(scanHits(t, set)) !== JSON.stringify(referenceHits(t, set)));
      expect(wrong).toEqual([]);
    }
  }, 120_000);

  test("the hidden-text scan looks where the regular expression did, in the same order, on real text", () => {
    const wrong = real.filter((t) => JSON.stringify(scanPlaces(t)) !== JSON.stringify(referencePlaces(t)));
    expect(wrong.map((t) => t.slice(0, 60))).toEqual([]);
  }, 120_000);

  test("the hidden-text scan looks where the regular expression did, on random text", () => {
    const texts = randomTexts(defaultRuleSet(), 0xb64, 20_000, 12);
    // the random text reaches both kinds of place
    expect(texts.filter((t) => scanPlaces(t).some((p) => p.startsWith("base64"))).length).toBeGreaterThan(2_000);
    expect(texts.filter((t) => scanPlaces(t).some((p) => p.startsWith("anomaly"))).length).toBeGreaterThan(2_000);
    const wrong = texts.filter((t) => JSON.stringify(scanPlaces(t)) !== JSON.stringify(referencePlaces(t)));
    expect(wrong).toEqual([]);
  }, 120_000);
});
