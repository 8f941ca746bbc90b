import { afterEach, describe, expect, test } from "bun:test";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { AiflareError, isAiflareError } from "../../src/errors.ts";
import { loadRedactOptions } from "../../src/core/redact.ts";
import { assertNoHardSecret, redactForWrite, redactJsonl, redactText, redactValueForWrite } from "../../src/redact/index.ts";

const AWS = "AKIAQWERTYUIOPASDF23";
const PW = "Sunset99!xQ";

function refusal(fn: () => unknown): AiflareError {
  try {
    fn();
  } catch (err) {
    if (isAiflareError(err, "REDACTION_REFUSED")) return err;
    throw err;
  }
  throw new Error("expected REDACTION_REFUSED");
}

describe("allowlist", () => {
  test("a literal keeps that value and only that value", () => {
    const out = redactText(`DB_PASSWORD=${PW}\nOTHER_PASSWORD=Winter77!zz`, { allow: [PW] });
    expect(out.text).toBe(`DB_PASSWORD=${PW}\nOTHER_PASSWORD=<REDACTED:password-assignment>`);
  });

  test("a literal that covers the secret and more (a whole URL) keeps it", () => {
    const url = "postgres://app:localdev1@localhost:5432/app";
    expect(redactText(`DATABASE_URL=${url}`, { allow: [url] }).text).toBe(`DATABASE_URL=${url}`);
  });

  test("a /regex/ entry is matched against the secret", () => {
    const out = redactText("token = test_abcdefgh12345678XY and token = prod_abcdefgh12345678XY", { allow: ["/^test_/"] });
    expect(out.text).toBe("token = test_abcdefgh12345678XY and token = <REDACTED:token-assignment>");
  });

  test("in JSONL, a value under a secret-like key is allowlisted too", () => {
    const line = JSON.stringify({ apiKey: "Zx81kQ0pLmN2bV7cRt5Y" });
    expect(redactJsonl(line, { allow: ["Zx81kQ0pLmN2bV7cRt5Y"] }).text).toBe(line);
  });
});

describe("extra patterns", () => {
  test("a plain pattern redacts the whole match under its kind", () => {
    const out = redactText("call ACME-1234-5678-9999 now", { patterns: [{ kind: "acme-license", pattern: "ACME-\\d{4}-\\d{4}-\\d{4}" }] });
    expect(out.text).toBe("call <REDACTED:acme-license> now");
    expect(out.findings).toEqual([{ kind: "acme-license", line: 1 }]);
  });

  test("a /regex/flags pattern with a group redacts only the group", () => {
    const out = redactText("internal_id: xyz\nSessionCookie=abc.def.ghi", { patterns: [{ kind: "session-cookie", pattern: "/sessioncookie=(\\S+)/i" }] });
    expect(out.text).toBe("internal_id: xyz\nSessionCookie=<REDACTED:session-cookie>");
    expect(out.findings).toEqual([{ kind: "session-cookie", line: 2 }]);
  });

  test("a bad regular expression or kind name is a CONFIG error that names the entry", () => {
    const bad = () => redactText("x", { patterns: [{ kind: "ok", pattern: "(unclosed" }] });
    expect(bad).toThrow(/redact\.patterns\[0\]\.pattern: not a valid regular expression/);
    expect(() => redactText("x", { patterns: [{ kind: "Bad Kind", pattern: "x" }] })).toThrow(/redact\.patterns\[0\]\.kind/);
  });
});

describe("loadRedactOptions", () => {
  let dir = "";
  afterEach(() => dir && rmSync(dir, { recursive: true, force: true }));

  test("reads redact: from aiflare.yml", () => {
    dir = mkdtempSync(join(tmpdir(), "aiflare-redact-"));
    writeFileSync(join(dir, "aiflare.yml"), `redact:\n  patterns:\n    - kind: acme-license\n      pattern: ACME-\\d{4}\n  allow:\n    - "${PW}"\n`);
    const opts = loadRedactOptions(dir);
    expect(opts).toEqual({ patterns: [{ kind: "acme-license", pattern: "ACME-\\d{4}" }], allow: [PW] });
    expect(redactText(`ACME-1234 password=${PW}`, opts).text).toBe(`<REDACTED:acme-license> password=${PW}`);
  });

  test("no file means defaults; a bad pattern is reported when loading", () => {
    dir = mkdtempSync(join(tmpdir(), "aiflare-redact-"));
    expect(loadRedactOptions(dir)).toEqual({ patterns: [], allow: [] });
    writeFileSync(join(dir, "aiflare.yml"), "redact:\n  patterns:\n    - kind: x\n      pattern: '[oops'\n");
    expect(() => loadRedactOptions(dir)).toThrow(/not a valid regular expression/);
  });
});

describe("fail-closed (stage two)", () => {
  test("a hard secret stage one was made to miss is caught, and the message names the kind, not the secret", () => {
    const text = `deploy with ${AWS} please`;
    expect(redactText(text, { allow: [AWS] }).text).toContain(AWS); // stage one let it through
    const err = refusal(() => redactForWrite(text, { allow: [AWS] }));
    expect(err.message).toContain("aws-access-key-id");
    expect(err.message).not.toContain(AWS);
    expect(err.data).toEqual({ kind: "aws-access-key-id", line: 1 });
  });

  test("nothing is written when the check refuses", () => {
    const dir = mkdtempSync(join(tmpdir(), "aiflare-redact-"));
    const file = join(dir, "out.jsonl");
    const store = (text: string) => writeFileSync(file, redactForWrite(text, { jsonl: true, allow: ["/^-----BEGIN/"] }));
    const pem = `-----BEGIN EC PRIVATE KEY-----\n${"MHcCAQEEIBkg4LVWM9nuwNSk3yByxZpYRTBnVJk5oGmc".repeat(2)}\n-----END EC PRIVATE KEY-----`;
    expect(() => store(JSON.stringify({ content: pem }))).toThrow(AiflareError);
    expect(existsSync(file)).toBe(false);
    store(JSON.stringify({ content: "fine" }));
    expect(existsSync(file)).toBe(true);
    rmSync(dir, { recursive: true, force: true });
  });

  test("an allowlisted soft secret is written as is", () => {
    expect(redactForWrite(`DB_PASSWORD=${PW}`, { allow: [PW] })).toBe(`DB_PASSWORD=${PW}`);
  });

  test("a hard secret hidden behind JSON escapes is still refused", () => {
    const escaped = String.raw`{"content":"AKIA\u0051WERTYUIOPASDF23"}`; // \u0051 is "Q": AKIAQWERTYUIOPASDF23
    expect(refusal(() => assertNoHardSecret(`{"a":1}\n${escaped}`)).data).toEqual({ kind: "aws-access-key-id", line: 2 });
  });

  test("the redaction marker itself passes stage two", () => {
    expect(() => assertNoHardSecret(redactForWrite(`key ${AWS}`))).not.toThrow();
  });

  test("redactValueForWrite redacts every string, keeps keys and non-strings, and refuses hard secrets", () => {
    const entry = { commitHash: "3f786850e387550fdab836ed7e6dc881de23001b", title: `use ${AWS}`, changedFiles: ["/home/alice/a.ts"], n: 3, nested: { clientSecret: "q8Zr2LmN5vX0pK7wT4yB" } };
    expect(redactValueForWrite(entry)).toEqual({
      commitHash: entry.commitHash,
      title: "use <REDACTED:aws-access-key-id>",
      changedFiles: ["~/a.ts"],
      n: 3,
      nested: { clientSecret: "<REDACTED:secret-assignment>" },
    });
    expect(() => redactValueForWrite(entry, { allow: [AWS] })).toThrow(/aws-access-key-id/);
  });
});
