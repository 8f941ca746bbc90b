import { describe, expect, test } from "bun:test";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { buildRuleSet, subRuleSet } from "../../src/redact/engine.ts";
import { findAllSpans } from "../../src/redact/hidden.ts";
import { builtinKinds, builtinRules, redactJsonl, redactText, type Rule } from "../../src/redact/index.ts";
import { defaultRuleSet } from "../../src/redact/options.ts";
import { embed, GENERATORS, Rand, sampleFor, type Format } from "../fixtures/secrets/samples.ts";

const KINDS = builtinKinds();
const RULES = builtinRules();

const CORPUS = join(import.meta.dir, "..", "fixtures", "secrets");

describe("rule table", () => {
  test("every rule's regex compiles (each is compiled on first use)", () => {
    for (const r of RULES) expect(r.re.global && r.re.sticky).toBe(true);
  });

  test("has at least 100 kinds, each named once in kebab case", () => {
    expect(KINDS.length).toBeGreaterThanOrEqual(100);
    expect(new Set(KINDS).size).toBe(KINDS.length);
    for (const k of KINDS) expect(k).toMatch(/^[a-z0-9]+(?:-[a-z0-9]+)*$/);
  });

  test("every kind has a sample generator", () => {
    expect(KINDS.filter((k) => !GENERATORS[k])).toEqual([]);
  });

  test("the issue's required families are covered", () => {
    for (const k of ["aws-access-key-id", "aws-secret-access-key", "gcp-api-key", "gcp-service-account-key", "azure-storage-account-key", "github-pat", "github-fine-grained-pat", "github-app-token", "gitlab-pat", "bitbucket-app-password", "openai-api-key", "anthropic-api-key", "huggingface-access-token", "stripe-secret-key", "slack-bot-token", "slack-webhook-url", "twilio-api-key", "sendgrid-api-token", "mailgun-private-api-token", "npm-access-token", "pypi-upload-token", "jwt", "private-key", "openssh-private-key", "postgres-uri", "mysql-uri", "mongodb-uri", "redis-uri", "amqp-uri", "password-assignment", "secret-assignment", "token-assignment", "generic-secret"]) {
      expect(KINDS).toContain(k);
    }
  });
});

const FORMATS: Format[] = ["prompt", "code", "jsonl"];

describe.each(RULES.map((r) => [r.kind]))("rule %s", (kind) => {
  test.each(FORMATS.map((f) => [f]))("finds and replaces a sample in %s", (format) => {
    for (let seed = 1; seed <= 3; seed++) {
      const r = new Rand(seed * 7717 + kind.length * 31 + format.length);
      const s = sampleFor(kind, r);
      const { text, needle } = embed(format, s.line, s.secret, r);
      const out = format === "jsonl" ? redactJsonl(text) : redactText(text);
      expect(out.text.includes(needle)).toBe(false);
      expect(out.findings.map((f) => f.kind)).toContain(kind);
      expect(out.text).toContain(`<REDACTED:${kind}>`);
    }
  });
});

describe("published example values", () => {
  const cases: [string, string, string][] = [
    ["AWS documentation key id", "aws_access_key_id = AKIAIOSFODNN7EXAMPLE", "aws-access-key-id"],
    ["AWS documentation secret", "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", "aws-secret-access-key"],
    ["Stripe documentation test key", "Stripe.api_key = 'sk_test_4eC39HqLyjWDarjtT1zdp7dc'", "stripe-secret-key"],
    ["Slack documentation webhook", "https://hooks.slack.com/services/T00000000/B00000000/XXXXXXXXXXXXXXXXXXXXXXXX", "slack-webhook-url"],
    ["jwt.io example", "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIiwiaWF0IjoxNTE2MjM5MDIyfQ.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c", "jwt"],
    ["postgres URL", "postgres://admin:Sup3rS3cret@prod-db.internal:5432/app", "postgres-uri"],
    ["redis URL without user", "REDIS_URL=redis://:k8sRedisPass2024@redis:6379/0", "redis-uri"],
    ["mongodb+srv URL", "mongodb+srv://svc:Zq9xW2vL@cluster0.abcd1.mongodb.net/db", "mongodb-uri"],
    ["prose password", "the staging password is Winter2024!x, please keep it private", "password-assignment"],
    ["JSON-escaped assignment", String.raw`{\"password\": \"Hunter2-Prod!\"}`, "password-assignment"],
    ["bearer header", "curl -H 'Authorization: Bearer 9f8e7d6c5b4a39281706f5e4d3c2b1a0ZZ' https://x", "authorization-bearer"],
  ];
  test.each(cases)("%s", (_name, text, kind) => {
    const out = redactText(text);
    expect(out.findings.map((f) => f.kind)).toContain(kind);
    expect(out.text).toContain(`<REDACTED:${kind}>`);
  });
});

describe("ordinary text is left alone", () => {
  const cases: [string, string][] = [
    ["typed field", "interface User { password: string; passwordHash?: string }"],
    ["reading a token", "const token = await getToken(req.headers.authorization);"],
    ["env reference", "password = process.env.DB_PASSWORD"],
    ["env var name", "DB_PASSWORD=${DB_PASSWORD}"],
    ["GitHub Actions secret", "token: ${{ secrets.GITHUB_TOKEN }}"],
    ["placeholder URL", "postgres://user:password@localhost:5432/mydb"],
    ["placeholder key", "api_key: <your-api-key>"],
    ["masked", "API_KEY=****************"],
    ["prose", "The password is required and the token expires after an hour."],
    ["basic usage heading", "## Basic authentication and Basic usage"],
    ["commit hash", "commit 3f786850e387550fdab836ed7e6dc881de23001b (HEAD -> main)"],
    ["uuid", "sessionId 123e4567-e89b-12d3-a456-426614174000"],
    ["timestamp", "2025-03-01T12:34:56.789Z"],
    ["integrity", '"integrity": "sha512-pXyLjH9lK2KH6XUnPkTqxJdPeZ1uLQh7C3cbSqBc3uQkE1pOZ0Fvhk5n8gZbKkLmQO1F2BtyMvdPVT+ZJmuCdA=="'],
    ["token usage", '{"input_tokens": 1234, "output_tokens": 56, "token_type": "Bearer"}'],
    ["URL with /home/", "see https://example.com/home/index.html"],
    ["ssh public key", "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl dev@laptop"],
    ["a PEM header mentioned in prose", "paste the block that starts with -----BEGIN RSA PRIVATE KEY----- here"],
    ["redaction marker", "token = <REDACTED:github-pat>"],
  ];
  test.each(cases)("%s", (_name, text) => {
    const out = redactText(text);
    expect(out.findings).toEqual([]);
    expect(out.text).toBe(text);
  });
});

describe("labelled corpus", () => {
  const positives = readFileSync(join(CORPUS, "positives.jsonl"), "utf8")
    .split("\n")
    .filter(Boolean)
    .map((l) => JSON.parse(l) as { kind: string; format: Format; text: string; needle: string });

  test("has at least 300 positives over every kind", () => {
    expect(positives.length).toBeGreaterThanOrEqual(300);
    expect(new Set(positives.map((p) => p.kind))).toEqual(new Set(KINDS));
  });

  test("every positive is removed and named with its kind", () => {
    const misses = positives.filter((p) => {
      const out = p.format === "jsonl" ? redactJsonl(p.text) : redactText(p.text);
      return out.text.includes(p.needle) || !out.findings.some((f) => f.kind === p.kind);
    });
    expect(misses.map((p) => `${p.kind}/${p.format}`)).toEqual([]);
  });

  test("a rule set drawn from another (the hard rules, the token rules) finds what one built on its own finds", () => {
    const all = defaultRuleSet();
    const subsets: [string, (r: Rule) => boolean][] = [
      ["hard", (r) => r.hard],
      ["token", (r) => r.keywords.length > 0 && !r.groups],
    ];
    for (const [name, keep] of subsets) {
      const drawn = subRuleSet(all, keep);
      const built = buildRuleSet(RULES.filter(keep));
      expect(drawn.rules).toEqual(built.rules);
      const texts = [...positives.map((p) => p.text), ...readdirSync(join(CORPUS, "negatives")).map((f) => readFileSync(join(CORPUS, "negatives", f), "utf8"))];
      const differ = texts.filter((t) => JSON.stringify(findAllSpans(t, drawn)) !== JSON.stringify(findAllSpans(t, built)));
      expect(differ.map((t) => `${name}: ${t.slice(0, 40)}`)).toEqual([]);
    }
  });

  const negatives = readdirSync(join(CORPUS, "negatives")).map((f) => ({ f, text: readFileSync(join(CORPUS, "negatives", f), "utf8") }));

  test("negatives are at least 2 MB with at most 1 false positive per MB", () => {
    const bytes = negatives.reduce((a, n) => a + Buffer.byteLength(n.text), 0);
    expect(bytes).toBeGreaterThanOrEqual(2_000_000);
    const found = negatives.flatMap((n) => (n.f.endsWith(".jsonl") ? redactJsonl(n.text) : redactText(n.text)).findings.map((x) => `${n.f}:${x.line}:${x.kind}`));
    expect(found.length / (bytes / 1e6)).toBeLessThanOrEqual(1);
  });

  test("commit hashes, UUIDs and timestamps survive untouched", () => {
    for (const name of ["git-log.txt", "transcript.jsonl"]) {
      const text = negatives.find((n) => n.f === name)!.text;
      const out = name.endsWith(".jsonl") ? redactJsonl(text).text : redactText(text).text;
      const ids = text.match(/\b[0-9a-f]{40}\b|\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b|\d{4}-\d\d-\d\dT[\d:.]+Z/g)!;
      expect(ids.length).toBeGreaterThan(1000);
      const outIds = new Set(out.match(/\b[0-9a-f]{40}\b|\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b|\d{4}-\d\d-\d\dT[\d:.]+Z/g));
      expect(ids.filter((id) => !outIds.has(id))).toEqual([]);
    }
  });
});
