/**
 * Every credential aiflare issues is a redaction rule (SPEC §9). The tokens here come from the real generators, so a
 * change of format fails this test.
 */
import { describe, expect, test } from "bun:test";
import { newUiToken } from "../../src/core/dashboard/token.ts";
import { findHardSecrets, redactForWrite, redactJsonl, redactText } from "../../src/redact/index.ts";
import { newKey, newToken } from "../../src/server/keys.ts";

const issued: [kind: string, make: () => string][] = [
  ["aiflare-api-key", () => newKey().key],
  ["aiflare-ui-token", () => newUiToken()],
  [
    "aiflare-session-cookie",
    () => newToken(),
  ],
];

const contexts = [
  (t: string) => t,
  (t: string) => `the key printed by serve key create is ${t}, use it in CI`,
  (t: string) => `curl -H "X-API-Key: ${t}" https://aiflare.example.com/api/v1/me`,
  (t: string) => `Cookie: aiflare_session=${t}; aiflare_ui=${t}`,
  (t: string) => `http://127.0.0.1:4000/?token=${t}#${t}`,
  (t: string) => `api_key: "${t}"`,
];

describe("aiflare's own credentials", () => {
  test.each(issued)("%s: 200 fresh ones are redacted in every context, as a hard secret", (kind, make) => {
    for (let i = 0; i < 200; i++) {
      const token = make();
      for (const ctx of contexts) {
        const text = ctx(token);
        expect(redactText(text).text).not.toContain(token);
        // and inside a conversation line, as stored
        expect(redactJsonl(JSON.stringify({ role: "user", content: text })).text).not.toContain(token);
      }
      // named by its own rule (a longer span of a generic one may name it in context: `?token=…#…`)
      expect(redactText(token).text).toBe(`<REDACTED:${kind}>`);
      expect(findHardSecrets(token).map((f) => f.kind)).toEqual([kind]);
      expect(() => redactForWrite(token, { allow: [token] })).toThrow(/still present after redaction/);
    }
  });
});
