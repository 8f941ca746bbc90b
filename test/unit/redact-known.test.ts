import { describe, expect, test } from "bun:test";
import { assertPlainIdentifier, redactForWrite, redactText, redactValueForWrite, redactValuesForWrite, SecretMemory } from "../../src/redact/index.ts";

const line = (role: string, content: string) => JSON.stringify({ role, content });

describe("a session's known secrets", () => {
  test.each([
    ["text", (t: string, known: SecretMemory) => redactText(t, { known }).text],
    ["write", (t: string, known: SecretMemory) => redactForWrite(t, { known })],
  ])("found ones are remembered with their kind and replaced where repeated (%s)", (_name, redact) => {
    const known = new SecretMemory();
    expect(redact("DB_PASSWORD=Sunset99!xQ", known)).toBe("DB_PASSWORD=<REDACTED:password-assignment>");
    expect(known.takeAdded()).toEqual([{ value: "Sunset99!xQ", kind: "password-assignment" }]);
    expect(redact("Noted the password Sunset99!xQ.", known)).toBe("Noted the password <REDACTED:password-assignment>.");
    expect(known.takeAdded()).toEqual([]);
    // without the memory the rules alone do not see it
    expect(redactText("Noted the password Sunset99!xQ.").text).toBe("Noted the password Sunset99!xQ.");
  });

  test("in JSONL, a line before the one that reveals it is redacted too, and so are JSON-escaped forms", () => {
    const known = new SecretMemory();
    const text = [line("assistant", "I tried Sunset99!xQ"), line("user", 'password: "Sunset99!xQ"'), line("assistant", "ok Sunset99!xQ")].join("\n");
    const out = redactForWrite(text, { jsonl: true, known });
    expect(out).not.toContain("Sunset99!xQ");
    expect(out.split("\n").map((l) => JSON.parse(l).content)).toEqual(["I tried <REDACTED:password-assignment>", 'password: "<REDACTED:password-assignment>"', "ok <REDACTED:password-assignment>"]);
    const quoted = new SecretMemory([{ value: 'pa"ss\\word9', kind: "password-assignment" }]);
    expect(redactText(`raw pa"ss\\word9, escaped ${JSON.stringify('pa"ss\\word9')}`, { known: quoted }).text).toBe(
      "raw <REDACTED:password-assignment>, escaped \"<REDACTED:password-assignment>\"",
    );
  });

  test("an entry's fields: one found in a later field redacts an earlier one and its JSONL snippet", () => {
    const known = new SecretMemory();
    const entry = { title: "Rotate Zq8v3Lm2Tn9Rb4", conversationSnippet: `${line("user", "use Zq8v3Lm2Tn9Rb4")}\n`, intent: "SESSION_SECRET=Zq8v3Lm2Tn9Rb4" };
    const out = redactValueForWrite(entry, { known });
    expect(JSON.stringify(out)).not.toContain("Zq8v3Lm2Tn9Rb4");
    expect(out.title).toBe("Rotate <REDACTED:secret-assignment>");
  });

  test("with a memory still empty, a value with nothing to redact is kept as it is; once one reveals a secret, later values are redacted by it", () => {
    const known = new SecretMemory();
    const plain = { title: "Fix the parser", changedFiles: ["src/parser.ts"] };
    const r = redactValuesForWrite([plain, { intent: "SESSION_SECRET=Zq8v3Lm2Tn9Rb4" }, { title: "Rotate Zq8v3Lm2Tn9Rb4" }], { known });
    expect(r.values[0]).toBe(plain);
    expect(r.changed).toEqual([false, true, true]);
    expect(JSON.stringify(r.values)).not.toContain("Zq8v3Lm2Tn9Rb4");
  });

  test("values that overlap in the text are both redacted whole", () => {
    const known = new SecretMemory([
      { value: "Zq8v3Lm2Tn", kind: "password-assignment" },
      { value: "Tn9Rb4Xc7Yd", kind: "secret-assignment" },
    ]);
    expect(redactText("x Zq8v3Lm2Tn9Rb4Xc7Yd y", { known }).text).toBe("x <REDACTED:password-assignment> y");
  });

  test("short values are not remembered; the session id is judged by the rules alone", () => {
    const known = new SecretMemory();
    expect(known.remember("abc12", "password-assignment")).toBe(false);
    expect(known.remember("<REDACTED:x>", "x")).toBe(false);
    expect(known.remember("sess-1x", "password-assignment")).toBe(true);
    expect(redactText("a sess-1x b", { known }).text).toBe("a <REDACTED:password-assignment> b");
    expect(() => assertPlainIdentifier("sess-1x", { known })).not.toThrow();
  });
});
