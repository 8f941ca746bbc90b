import { describe, expect, test } from "bun:test";
import { Glob } from "bun";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { FIXTURES } from "../helpers.ts";
import { redactForWrite, redactJsonl, redactText } from "../../src/redact/index.ts";
import { isJsonText } from "../../src/redact/json-check.ts";

const AWS = "AKIAQWERTYUIOPASDF23";
const GHP = "ghp_0123456789abcdefghijABCDEFGHIJ012345";
const SESSION = "123e4567-e89b-12d3-a456-426614174000";
const COMMIT = "3f786850e387550fdab836ed7e6dc881de23001b";

const lines = (text: string) => text.split("\n");

describe("redactJsonl", () => {
  test("redacts inside string values and keeps every line valid JSON", () => {
    const input = [
      JSON.stringify({ role: "user", content: `my key is ${AWS}\nand the token ${GHP}`, sessionId: SESSION }),
      JSON.stringify({ role: "assistant", content: [{ type: "text", text: `export GITHUB_TOKEN="${GHP}"` }], commit: COMMIT }),
    ].join("\n");
    const out = redactJsonl(input);
    for (const line of lines(out.text)) expect(() => JSON.parse(line)).not.toThrow();
    expect(out.text).not.toContain(AWS);
    expect(out.text).not.toContain(GHP);
    const first = JSON.parse(lines(out.text)[0]!);
    expect(first.content).toBe("my key is <REDACTED:aws-access-key-id>\nand the token <REDACTED:github-pat>");
    expect(first.sessionId).toBe(SESSION);
    expect(JSON.parse(lines(out.text)[1]!).commit).toBe(COMMIT);
    expect(out.findings).toEqual([
      { kind: "aws-access-key-id", line: 1 },
      { kind: "github-pat", line: 1 },
      { kind: "github-pat", line: 2 },
    ]);
  });

  test("lines without a secret keep their exact bytes (spacing, number formats, key order)", () => {
    const line = `{ "b": 1.50, "a": 12345678901234567890, "uuid": "${SESSION}", "t": "2025-01-02T03:04:05.678Z", "x": "\\u00e9" }`;
    expect(redactJsonl(`${line}\n${line}`).text).toBe(`${line}\n${line}`);
  });

  test("only the string holding the secret is re-encoded; the rest of the line is untouched", () => {
    const line = `{"n": 1.50, "big": 12345678901234567890, "content": "key ${AWS}"}`;
    expect(redactJsonl(line).text).toBe(`{"n": 1.50, "big": 12345678901234567890, "content": "key <REDACTED:aws-access-key-id>"}`);
  });

  test("keys are never changed, values under secret-like keys are redacted whole", () => {
    const line = JSON.stringify({ [AWS]: "x", apiKey: "Zx81kQ0pLmN2bV7cRt5Y", password: "s3cret-Pa55!", tokens: 12, maxTokens: "4096", token_type: "Bearer" });
    const out = JSON.parse(redactJsonl(line).text);
    expect(Object.keys(out)).toEqual([AWS, "apiKey", "password", "tokens", "maxTokens", "token_type"]);
    expect(out.apiKey).toBe("<REDACTED:key-assignment>");
    expect(out.password).toBe("<REDACTED:password-assignment>");
    expect(out.maxTokens).toBe("4096");
    expect(out.token_type).toBe("Bearer");
  });

  test("stage two refuses a hard secret in a key, also after many lines whose keys were clean", () => {
    const clean = Array.from({ length: 50 }, (_, i) => JSON.stringify({ role: "user", content: `line ${i}` })).join("\n");
    expect(redactForWrite(clean, { jsonl: true })).toBe(clean);
    for (const key of [AWS, AWS.replace("A", "\\u0041")]) {
      const bad = `${clean}\n{"role": "user", "${key}": "x"}`;
      expect(() => redactForWrite(bad, { jsonl: true })).toThrow(/aws-access-key-id \(line 51\)/);
      // the same clean shape again is still let through
      expect(redactForWrite(clean, { jsonl: true })).toBe(clean);
    }
  });

  test("JSON escapes are decoded before matching (\\/ inside a key, \\n inside a private key)", () => {
    const secret = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYz8Q2mN4pLk";
    const raw = `{"content": "aws_secret_access_key = ${secret.replace(/\//g, "\\/")}"}`;
    const out = redactJsonl(raw);
    expect(JSON.parse(out.text).content).toBe("aws_secret_access_key = <REDACTED:aws-secret-access-key>");
    const pem = `-----BEGIN RSA PRIVATE KEY-----\n${"MIIEowIBAAKCAQEAx7Yq3w9".repeat(4)}\n-----END RSA PRIVATE KEY-----`;
    const out2 = redactJsonl(JSON.stringify({ content: `here:\n${pem}\nthanks` }));
    expect(JSON.parse(out2.text).content).toBe("here:\n<REDACTED:private-key>\nthanks");
  });

  test("lines that are not JSON are redacted as text, runs of them together (multi-line keys)", () => {
    const pem = `-----BEGIN OPENSSH PRIVATE KEY-----\n${"b3BlbnNzaC1rZXktdjEAAAAABG5vbmU".repeat(2)}\n${"QyNTUxOQAAACB".repeat(4)}\n-----END OPENSSH PRIVATE KEY-----`;
    const input = [JSON.stringify({ role: "user", content: "hi" }), "not json", pem, `{"role":"assistant","content":"ok"}`, `{"a":1}{"b":"${GHP}"}`].join("\n");
    const out = redactJsonl(input);
    expect(out.text).toBe([JSON.stringify({ role: "user", content: "hi" }), "not json", "<REDACTED:openssh-private-key>", `{"role":"assistant","content":"ok"}`, `{"a":1}{"b":"<REDACTED:github-pat>"}`].join("\n"));
    expect(out.findings).toEqual([
      { kind: "openssh-private-key", line: 3 },
      { kind: "github-pat", line: 8 },
    ]);
  });

  test("home directories in values become ~, also Windows paths", () => {
    const line = JSON.stringify({ cwd: "/home/alice/work/app", file: "C:\\Users\\Bob\\proj\\a.ts", mac: "/Users/carol/x" });
    expect(JSON.parse(redactJsonl(line).text)).toEqual({ cwd: "~/work/app", file: "~\\proj\\a.ts", mac: "~/x" });
  });

  test("CRLF line endings and a missing final newline are kept", () => {
    const input = `{"content":"${AWS}"}\r\n{"content":"ok"}`;
    expect(redactJsonl(input).text).toBe(`{"content":"<REDACTED:aws-access-key-id>"}\r\n{"content":"ok"}`);
  });
});

describe("a JSON line pasted into a string after other text", () => {
  const PEM_BODY = "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCArsoRpwisPUgGNHXMrGNyGhkwJKMm1Qg";
  const gcp = JSON.stringify({ type: "service_account", private_key: `-----BEGIN PRIVATE KEY-----\n${PEM_BODY}\n-----END PRIVATE KEY-----\n` });
  const docker = JSON.stringify({ auths: { "https://index.docker.io/v1/": { auth: "ZGVwbG95OlBhNTVqTnAwSTFsZyo=" } } });
  test.each([
    ["a service account key, escaped twice", `can you wire this up?\n${JSON.stringify({ role: "user", content: `the key:\n${gcp}` })}`, PEM_BODY],
    ["a Docker config", `here is my config:\n\n${docker}\n\nthanks`, "ZGVwbG95OlBhNTVqTnAwSTFsZyo="],
  ])("%s: redacted in its decoded strings, never left for stage two to refuse", (_name, content, secret) => {
    const stored = redactForWrite(JSON.stringify({ role: "user", content }), { jsonl: true });
    expect(stored).not.toContain(secret);
    expect(JSON.parse(stored).content.startsWith(content.slice(0, 12))).toBe(true);
  });
});

describe("home directories in text", () => {
  const cases: [string, string][] = [
    ["/home/alice/project/src/a.ts", "~/project/src/a.ts"],
    ["cd /Users/bob.smith/Documents", "cd ~/Documents"],
    ["at C:\\Users\\Carol\\repo\\x.js:10", "at ~\\repo\\x.js:10"],
    ['{"cwd":"C:\\\\Users\\\\dave\\\\repo"}', '{"cwd":"~\\\\repo"}'],
    ["C:/Users/erin/repo", "~/repo"],
    ['"path": "/home/frank"', '"path": "~"'],
    ["file:///home/gina/a.txt", "file://~/a.txt"],
    ["https://example.com/home/index.html", "https://example.com/home/index.html"],
    ["/var/home/x and ./home/y", "/var/home/x and ./home/y"],
  ];
  test.each(cases)("%s", (input, expected) => {
    expect(redactText(input).text).toBe(expected);
  });
});

describe("real Claude Code transcripts (shared fixtures)", () => {
  const files = [...new Glob("**/*.jsonl").scanSync(FIXTURES)];

  test("every JSON line stays JSON, nothing is falsely redacted", () => {
    expect(files.length).toBeGreaterThan(5);
    let bytes = 0;
    const found: string[] = [];
    for (const f of files) {
      const text = readFileSync(join(FIXTURES, f), "utf8");
      bytes += text.length;
      const out = redactJsonl(text);
      found.push(...out.findings.map((x) => `${f}:${x.line}:${x.kind}`));
      const outLines = out.text.split("\n");
      text.split("\n").forEach((line, i) => {
        let wasJson = true;
        try {
          JSON.parse(line);
        } catch {
          wasJson = false;
        }
        if (wasJson) expect(() => JSON.parse(outLines[i]!)).not.toThrow();
      });
      expect(outLines.length).toBe(text.split("\n").length);
    }
    expect(found.length / (bytes / 1e6)).toBeLessThanOrEqual(1);
  });
});

describe("JSON lines are recognised without parsing them", () => {
  const lines = [
    '{"a":1}',
    ' {"a":[1,2,{"b":null}],"c":true} ',
    '{"a":"x\\"y\\\\z\\/\\u00e9\\n"}',
    '"just a string"',
    "[]",
    '{"n":-0.5e+3,"m":0,"k":1E9}',
    '{"a":1} trailing',
    '{"a":1,}',
    "[1,2,]",
    '{"a":tru}',
    '{"a":01}',
    '{"a":"\\x41"}',
    '{"a":"\\u12"}',
    '{"a":"tab\there"}',
    '{"a" 1}',
    "{",
    "",
    "nul",
    '{"a":1}{"b":2}',
    "{'a':1}",
    '[{"a":[1,{"b":[]}]},{}]',
    "[[],[[]],{}]",
    ' { "a" : [ 1 , 2 ] , "b" : { } } ',
    "[1 2]",
    '{"a":1 "b":2}',
    "{,}",
    "[,1]",
    '{"a":}',
    '{"a"::1}',
    '{"a":[}',
    '[{"a":1]}',
    "]",
  ];
  test.each(lines.map((l) => [l]))("%p agrees with JSON.parse", (line) => {
    let valid = true;
    try {
      JSON.parse(line);
    } catch {
      valid = false;
    }
    expect(isJsonText(line)).toBe(valid);
  });

  test("agrees with JSON.parse on random JSON texts and on each of them cut or with a character changed", () => {
    let seed = 7;
    const rand = (n: number) => {
      seed = (seed * 1103515245 + 12345) & 0x7fffffff;
      return (seed >>> 8) % n;
    };
    const gen = (depth: number): string => {
      const k = rand(depth > 3 ? 4 : 6);
      if (k === 0) return String(rand(1000) - 500) + (rand(2) ? ".5" : "") + (rand(3) === 0 ? "e-3" : "");
      if (k === 1) return JSON.stringify("s\\\"\u00e9\n".slice(0, rand(8)) + "x".repeat(rand(4)));
      if (k === 2) return ["true", "false", "null"][rand(3)]!;
      if (k === 3) return '"plain"';
      if (k === 4) return `[${Array.from({ length: rand(4) }, () => gen(depth + 1)).join(rand(2) ? "," : " , ")}]`;
      return `{${Array.from({ length: rand(4) }, (_, i) => `"k${i}"${rand(2) ? ":" : " : "}${gen(depth + 1)}`).join(",")}}`;
    };
    const agrees = (text: string) => {
      let valid = true;
      try {
        JSON.parse(text);
      } catch {
        valid = false;
      }
      return isJsonText(text) === valid;
    };
    const wrong: string[] = [];
    for (let n = 0; n < 1500; n++) {
      const text = gen(0);
      const cut = text.slice(0, rand(text.length + 1));
      const at = rand(text.length);
      const changed = text.slice(0, at) + '{}[],:" 1tn\\'[rand(12)] + text.slice(at + 1);
      for (const t of [text, cut, changed]) if (!agrees(t)) wrong.push(t);
    }
    expect(wrong).toEqual([]);
  });
});
