/**
 * The built-in rules as a redacting process gets them (each spec built and each regex compiled when the rule first
 * runs, the keyword index read from the generated rules-table.ts) against the rules built from their specs at once
 * with an index built from them: the generated file is up to date, every rule is the same, and both find the same
 * spans in every fixture text, labelled secret and evasion sample.
 */
import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { RULE_TABLE_PATH, ruleTableSource } from "../../scripts/rules-table.ts";
import { buildRuleSet, subRuleSet, type RuleSet } from "../../src/redact/engine.ts";
import { findAllSpans } from "../../src/redact/hidden.ts";
import { defaultRuleSet, hardRuleSet } from "../../src/redact/options.ts";
import { builtinRules, specRules } from "../../src/redact/rules.ts";
import { evasionCases, homeCases } from "../fixtures/secrets/evasion.ts";
import { FIXTURES_DIR as FIXTURES, filesUnder as files } from "../fixtures/files.ts";

/** Every text fixture under claude-code, agents and secrets whole, each labelled secret, evasion and home sample. */
function texts(): string[] {
  const dirs = ["claude-code", "agents", "secrets/negatives", "secrets/code"].map((d) => join(FIXTURES, d));
  const out = dirs
    .flatMap(files)
    .filter((f) => /\.(jsonl?|txt|md|ts|py|js)$/.test(f))
    .map((f) => readFileSync(f, "utf8"));
  for (const l of readFileSync(join(FIXTURES, "secrets", "positives.jsonl"), "utf8").split("\n").filter(Boolean)) {
    out.push((JSON.parse(l) as { text: string }).text);
  }
  for (const e of evasionCases()) out.push(e.text);
  for (const h of homeCases()) out.push(h.text);
  return out;
}

describe("the generated rule table", () => {
  test("rules-table.ts is what scripts/rules-table.ts generates from rules.ts", () => {
    // a rule changed without regenerating: `bun run scripts/rules-table.ts`
    expect(readFileSync(RULE_TABLE_PATH, "utf8")).toBe(ruleTableSource());
  });

  test("each rule built on first use is the rule built from its spec at once", () => {
    const lazy = builtinRules();
    const eager = specRules();
    expect(lazy.length).toBe(eager.length);
    const shape = (r: (typeof lazy)[number]) => ({
      kind: r.kind,
      keywords: [...r.keywords],
      hard: r.hard,
      groups: r.groups,
      back: r.back,
      source: r.re.source,
      flags: r.re.flags,
      check: r.check === undefined ? "none" : "some",
    });
    expect(lazy.map(shape)).toEqual(eager.map(shape));
  });

  test("the generated keyword index and hard-secret set are the ones built from the rules", () => {
    const built = buildRuleSet(specRules());
    const read = defaultRuleSet();
    expect(read.keywords).toEqual(built.keywords);
    expect(read.keywordRules).toEqual(built.keywordRules);
    expect(read.always).toEqual(built.always);
    expect(read.buckets).toEqual(built.buckets);
    expect(Buffer.from(read.gram3.buffer).equals(Buffer.from(built.gram3.buffer))).toBe(true);
    expect(Buffer.from(read.gram4.buffer).equals(Buffer.from(built.gram4.buffer))).toBe(true);
    expect(Buffer.from(read.starts.buffer).equals(Buffer.from(built.starts.buffer))).toBe(true);
    const hard = subRuleSet(built, (r) => r.hard);
    expect(hardRuleSet().rules.map((r) => r.kind)).toEqual(hard.rules.map((r) => r.kind));
    expect(hardRuleSet().keywordRules).toEqual(hard.keywordRules);
    expect(hardRuleSet().always).toEqual(hard.always);
  });

  test("rules built on first use find what rules built at once find, in every fixture text and labelled secret", () => {
    const eager = specRules();
    // every regex compiled before any text is scanned
    for (const r of eager) expect(r.re.sticky).toBe(true);
    const eagerAll = buildRuleSet(eager);
    const pairs: [string, RuleSet, RuleSet][] = [
      ["all", defaultRuleSet(), eagerAll],
      ["hard", hardRuleSet(), subRuleSet(eagerAll, (r) => r.hard)],
    ];
    const all = texts();
    expect(all.length).toBeGreaterThan(500);
    let found = 0;
    for (const [name, lazySet, eagerSet] of pairs) {
      const differ: string[] = [];
      for (const t of all) {
        const a = findAllSpans(t, lazySet);
        const b = findAllSpans(t, eagerSet);
        found += b.length;
        if (JSON.stringify(a) !== JSON.stringify(b)) differ.push(`${name}: ${t.slice(0, 40)}`);
      }
      expect(differ).toEqual([]);
    }
    expect(found).toBeGreaterThan(300);
  });
});

describe("a redacting process builds only the rules it runs", () => {
  /** Redacts `text` in a process of its own (both stages) and answers how many rule specs it built. */
  function specsBuiltFor(text: string): number {
    const code = [
      `const { redactForWrite } = await import(${JSON.stringify(join(import.meta.dir, "..", "..", "src", "redact", "index.ts"))});`,
      `const { builtSpecs } = await import(${JSON.stringify(join(import.meta.dir, "..", "..", "src", "redact", "rules.ts"))});`,
      `const out = redactForWrite(${JSON.stringify(text)});`,
      `console.log(JSON.stringify({ n: builtSpecs(), text: out }));`,
    ].join("\n");
    const r = Bun.spawnSync([process.execPath, "--eval", code], { stdout: "pipe", stderr: "pipe" });
    expect(r.stderr.toString()).toBe("");
    const { n, text: redacted } = JSON.parse(r.stdout.toString()) as { n: number; text: string };
    if (/ghp_/.test(text)) expect(redacted).toContain("<REDACTED:github-pat>");
    return n;
  }

  test("text without a keyword builds none; a GitHub token builds its own rule and few others", () => {
    expect(specsBuiltFor("a plain sentence about nothing in particular\n")).toBe(0);
    const n = specsBuiltFor(`the build uses ghp_${"aB3dE5gH7jK9mN1pQ3sT5vW7yZ9bC1dE3fG5"} now\n`);
    expect(n).toBeGreaterThan(0);
    expect(n).toBeLessThanOrEqual(3);
  });
});
