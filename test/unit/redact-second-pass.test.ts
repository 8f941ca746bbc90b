/**
 * An AWS secret access key right after its key id is found with no keyword, and a second pass over redacted text
 * finds exactly what the first found: local objects and what sync sends (stored text redacted again) agree.
 */
import { describe, expect, test } from "bun:test";
import { redactForWrite, redactText, redactValueForWrite } from "../../src/redact/index.ts";

describe("an AWS secret access key right after its key id, with no keyword", () => {
  const ID = "AKIAU5I2SCGMZBK43TTY";
  const SECRET = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYzz12KEYqAB";
  test.each([
    ["space", `${ID} ${SECRET}`],
    ["colon", `${ID}:${SECRET}`],
    ["comma (AWS's credentials CSV)", `Access key ID,Secret access key\n${ID},${SECRET}`],
    ["quoted list", `["${ID}", "${SECRET}"]`],
    ["next line", `${ID}\n${SECRET}`],
  ])("%s", (_name, text) => {
    const out = redactText(text);
    expect(out.text).not.toContain(ID);
    expect(out.text).not.toContain(SECRET);
    expect(out.findings.map((f) => f.kind)).toEqual(["aws-access-key-id", "aws-secret-access-key"]);
  });

  test("a word or a short value after the id is not taken for a secret", () => {
    expect(redactText(`${ID} is the key id of the deploy user`).text).toBe("<REDACTED:aws-access-key-id> is the key id of the deploy user");
    expect(redactText(`${ID}:ReadOnlyAccessPolicy`).text).toBe("<REDACTED:aws-access-key-id>:ReadOnlyAccessPolicy");
  });
});

describe("a second pass finds exactly what the first found", () => {
  const samples = [
    // the kind name of a placeholder holds rule keywords (`access-key`, `secret`, `token`, `password`)
    "AKIAU5I2SCGMZBK43TTY Zq8v3Lm2Tn9Rb4Xc7Yd1We",
    "password=Sunset99!xQ then Zq8v3Lm2Tn9Rb4Xc7Yd1WeQ7",
    "client_secret: Q7wE9rT2yU4iO6pA8sD0fG3hJ5kL7zX9 and Zq8v3Lm2Tn9Rb4Xc7Yd1We",
    "token = 'Ab12Cd34Ef56Gh78Ij90Kl12' next to Mn34Op56Qr78St90Uv12Wx34",
  ];
  test.each(samples.map((s) => [s]))("%s", (text) => {
    const once = redactText(text).text;
    expect(once).not.toBe(text);
    expect(redactText(once).text).toBe(once);
    const line = JSON.stringify({ role: "user", content: text });
    const stored = redactForWrite(line, { jsonl: true });
    expect(redactForWrite(stored, { jsonl: true })).toBe(stored);
    const entry = redactValueForWrite({ intent: text, conversationSnippet: `${line}\n` });
    expect(redactValueForWrite(entry)).toEqual(entry);
  });
});
