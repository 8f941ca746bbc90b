import { describe, expect, test } from "bun:test";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { assertNoHardSecret, redactForWrite, redactJsonl, redactText, redactValueForWrite } from "../../src/redact/index.ts";
import { evasionCases, homeCases, type EvasionCase } from "../fixtures/secrets/evasion.ts";
import { Rand, sampleFor } from "../fixtures/secrets/samples.ts";

const CASES = evasionCases();
const CODE = join(import.meta.dir, "..", "fixtures", "secrets", "code");

/** The needles of `c` still present in `text` (as written, or JSON-escaped once). */
function survivors(c: EvasionCase, text: string): string[] {
  return c.needles.filter((n) => text.includes(n) || text.includes(JSON.stringify(n).slice(1, -1)));
}

describe("labelled evasion corpus", () => {
  test("covers every form with several cases", () => {
    const perForm = new Map<string, number>();
    for (const c of CASES) perForm.set(c.form, (perForm.get(c.form) ?? 0) + 1);
    expect([...perForm.keys()].sort()).toEqual(["boundary", "encoded", "near-miss", "split", "zero-width"]);
    for (const n of perForm.values()) expect(n).toBeGreaterThanOrEqual(5);
    for (const c of CASES) expect(c.needles.length).toBeGreaterThan(0);
  });

  test.each(CASES.map((c) => [`${c.form}: ${c.name}`, c]))("%s is redacted as text, as JSONL and as an entry field", (_n, c) => {
    const asText = redactText(c.text);
    expect(survivors(c, asText.text)).toEqual([]);
    expect(asText.findings.length).toBeGreaterThan(0);
    expect(asText.text).toContain("<REDACTED:");

    const line = JSON.stringify({ type: "user", message: { role: "user", content: c.text } });
    const asJsonl = redactJsonl(line);
    expect(survivors(c, asJsonl.text)).toEqual([]);
    expect(JSON.parse(asJsonl.text).message.content).toContain("<REDACTED:");

    const entry = redactValueForWrite({ title: c.text, changedFiles: [c.text], conversationSnippet: `${line}\n` });
    expect(survivors(c, JSON.stringify(entry))).toEqual([]);
    expect(redactForWrite(`${line}\n`, { jsonl: true })).toBe(`${asJsonl.text}\n`);
  });

  test("text around an evasive secret is kept", () => {
    const c = CASES.find((x) => x.name === "AWS key id in a file name")!;
    expect(redactText(c.text).text).toBe("aws s3 cp s3://backups/creds_<REDACTED:aws-access-key-id>.csv ./");
    const split = CASES.find((x) => x.name === "GitHub token wrapped by the terminal")!;
    expect(redactText(split.text).text).toBe("$ echo $GITHUB_TOKEN\n<REDACTED:github-pat>\n");
  });

  test("joining lines never carries a value over into the next line", () => {
    const c = CASES.find((x) => x.name === "GitHub token after a variable prefix")!;
    const ghp = c.needles[0]!;
    const text = `aws_secret_access_key=${"Zq8v3Lm2Tn9Rb4Xc7Yd1We6Pf5Gh0Jk2Ls8Ma3Qn"}\nGITHUB_TOKEN=${ghp}\nNEXT_LINE=plain`;
    expect(redactText(text).text).toBe("aws_secret_access_key=<REDACTED:aws-secret-access-key>\nGITHUB_TOKEN=<REDACTED:github-pat>\nNEXT_LINE=plain");
  });

  test("stage two refuses an allowlisted hard secret in an evasive form", () => {
    const c = CASES.find((x) => x.name === "\\u00XX escapes in pasted JSON (whole key)")!;
    const zw = CASES.find((x) => x.name === "zwsp every 4 characters")!;
    for (const text of [c.text, zw.text]) expect(() => assertNoHardSecret(text)).toThrow(/github-pat/);
    // through the write path, where stage two looks at what stage one left of each string value
    const ghp = zw.needles[0]!;
    const line = JSON.stringify({ message: { content: zw.text } });
    expect(redactForWrite(line, { jsonl: true })).not.toContain(zw.needles[1]!);
    expect(() => redactForWrite(line, { jsonl: true, allow: [ghp] })).toThrow(/github-pat/);
    expect(() => redactValueForWrite({ title: zw.text }, { allow: [ghp] })).toThrow(/github-pat/);
  });
});

describe("near misses of fixed-length provider tokens", () => {
  const kinds = ["aws-access-key-id", "github-pat", "github-oauth-token", "npm-access-token", "gcp-api-key", "alibaba-access-key-id", "readme-api-token", "doppler-api-token", "sentry-user-token", "prefect-api-token", "infracost-api-token", "groq-api-key"];
  test.each(kinds.map((k) => [k]))("%s two characters short or long is still redacted", (kind) => {
    const r = new Rand(kind.length * 131);
    const { secret } = sampleFor(kind, r);
    for (const near of [secret.slice(0, -2), `${secret}${secret.slice(-2)}`]) {
      const out = redactText(`here: ${near} (rotated)`);
      expect(out.text).toBe(`here: <REDACTED:${kind}> (rotated)`);
    }
  });
});

describe("home directories after a JSON escape", () => {
  test.each(homeCases().map((h) => [h.home, h]))("%s in a conversationSnippet and as escaped text", (_n, h) => {
    const snippet = [JSON.stringify({ role: "user", content: h.text }), JSON.stringify({ role: "assistant", content: `ok ${h.text}` })].join("\n");
    const entry = redactValueForWrite({ conversationSnippet: snippet });
    const lines = entry.conversationSnippet.split("\n").map((l: string) => JSON.parse(l).content as string);
    for (const l of lines) {
      expect(l).not.toContain(h.home);
      expect(l).toContain("~");
    }
    // the same text JSON-escaped inside plain text
    const escaped = redactText(JSON.stringify(h.text)).text;
    expect(escaped).not.toContain(JSON.stringify(h.home).slice(1, -1));
  });
});

describe("real code is left alone", () => {
  const corpora = readdirSync(CODE).filter((f) => f.endsWith(".txt") && !f.startsWith("LICENSE"));

  test("the corpus is a few MB of TypeScript, Python and npm's JavaScript", () => {
    expect(corpora.sort()).toEqual(["npm.txt", "python.txt", "typescript.txt"]);
    const mb = corpora.reduce((a, f) => a + Buffer.byteLength(readFileSync(join(CODE, f))), 0) / 1e6;
    expect(mb).toBeGreaterThan(3);
    expect(readFileSync(join(CODE, "SOURCES.md"), "utf8")).toContain("Apache-2.0");
  });

  test.each(corpora.map((f) => [f]))("%s: at most 0.2 findings per MB", (f) => {
    const text = readFileSync(join(CODE, f), "utf8");
    const mb = Buffer.byteLength(text) / 1e6;
    const { findings } = redactText(text);
    expect(findings.length / mb).toBeLessThanOrEqual(0.2);
  });

  test.each([
    ["a destructured name", "const { contextToken: contextToken2, previousToken: previousToken2 } = getRelevantTokens(position, sourceFile);"],
    ["a diagnostics member", "error2(errorNode, Diagnostics.The_0_operator_is_not_allowed_for_boolean_types_Consider_using_1_instead, tokenToString(kind));"],
    ["a call", "passwd = getpass(prompt, stream)"],
    ["a call with a private helper", "user, passwd = _splitpasswd(user)"],
    ["a constructor", "password_mgr = HTTPPasswordMgr()"],
    ["a header name", "auth_header = 'Proxy-Authorization'"],
    ["a word pair", "self.passwd = 'hello$world'"],
    ["a negated name", "const exclamationToken = !questionToken && !scanner2.hasPrecedingLineBreak() ? parseOptionalToken(54) : void 0;"],
  ])("%s", (_n, line) => {
    expect(redactText(line)).toEqual({ text: line, findings: [] });
  });
});

describe("a whole token at the end of a line", () => {
  const token = ["ghp", "_", "aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3zA5"].join("");
  test("keeps the line break and the next line's words", () => {
    expect(redactText(`the key ${token}\nand more here`).text).toBe("the key <REDACTED:github-pat>\nand more here");
    expect(redactText(`the key ${token}\r\nand more`).text).toBe("the key <REDACTED:github-pat>\r\nand more");
  });
  test("while a token split across the break is still redacted whole", () => {
    expect(redactText(`the key ${token.slice(0, 20)}\n${token.slice(20)} and more`).text).toBe("the key <REDACTED:github-pat> and more");
  });
});
