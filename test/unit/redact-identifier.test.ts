import { describe, expect, test } from "bun:test";
import { isAiflareError } from "../../src/errors.ts";
import { assertPlainIdentifier, builtinRules, HEX_KEYWORDS, redactText, type RedactOptions } from "../../src/redact/index.ts";

/** The kind an id is refused as, or null when it may be used as it is. */
function refusedAs(id: string, opts: RedactOptions = {}): string | null {
  try {
    assertPlainIdentifier(id, opts);
    return null;
  } catch (err) {
    if (!isAiflareError(err, "REDACTION_REFUSED")) throw err;
    expect(err.message).not.toContain(id);
    return String(err.data?.kind);
  }
}

describe("assertPlainIdentifier (session ids written as paths, trailers and body fields)", () => {
  const plain: string[] = [
    "abc7156b-6420-4373-a150-9b2eecad6805", // Claude Code
    "0199a5d2-7c1e-7b42-9f3a-1c2d3e4f5a6b", // Codex (UUIDv7)
    "sess-hook-1",
    "session_2025.01.02",
    "a",
    "x".repeat(128),
    "0123456789abcdef0123456789abcdef01234567", // a commit hash
  ];
  test.each(plain)("%s is kept", (id) => {
    expect(refusedAs(id)).toBeNull();
  });

  const secrets: [string, string][] = [
    ["ghp_0123456789abcdefghijABCDEFGHIJ012345", "github-pat"],
    ["AKIAQWERTYUIOPASDF23", "aws-access-key-id"],
    ["sk-proj-Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4zAb7dEf0hIj3kLm6nOp9qRs2tUv5wXy8zT3BlbkFJ", "openai-api-key"],
  ];
  test.each(secrets)("%s is refused as %s", (id, kind) => {
    expect(refusedAs(id)).toBe(kind);
  });

  test("an allowlisted hard secret is still refused; an extra pattern refuses what it matches", () => {
    expect(refusedAs("AKIAQWERTYUIOPASDF23", { allow: ["AKIAQWERTYUIOPASDF23"] })).toBe("aws-access-key-id");
    expect(refusedAs("ACME-1234-5678", { patterns: [{ kind: "acme-license", pattern: "ACME-[0-9]{4}-[0-9]{4}" }] })).toBe("acme-license");
    expect(refusedAs("ACME-1234-5678")).toBeNull();
  });

  // UUIDs are kept without the rule set being built unless they spell a keyword written in hex digits
  test("a UUID spelling a hex keyword still goes through the rules; the written-out list is the table's", () => {
    const hex = builtinRules().flatMap((r) => r.keywords.filter((k) => /^[0-9a-f-]+$/.test(k)));
    expect([...new Set(hex)].sort()).toEqual([...HEX_KEYWORDS]);
    expect(refusedAs("acca156b-6420-4373-a150-9b2eecad6805")).toBeNull();
    expect(refusedAs("abc7156b-6420-4373-eaaa-9b2eecad6805")).toBeNull();
  });

  test("the rules leave random UUIDs, upper and lower case, as they are", () => {
    for (let i = 0; i < 2000; i++) {
      const id = i % 2 ? crypto.randomUUID() : crypto.randomUUID().toUpperCase();
      expect(redactText(id)).toEqual({ text: id, findings: [] });
      expect(refusedAs(id)).toBeNull();
    }
  });

  test("an extra pattern still sees a UUID-shaped id", () => {
    const id = "abc7156b-6420-4373-a150-9b2eecad6805";
    expect(refusedAs(id, { patterns: [{ kind: "uuid-like", pattern: "[0-9a-f]{8}-[0-9a-f]{4}" }] })).toBe("uuid-like");
  });
});
