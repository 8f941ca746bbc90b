import { afterEach, describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { runBin, tempRepo, type TempRepo } from "../helpers.ts";

const AWS = "AKIAQWERTYUIOPASDF23";
const GHP = "ghp_0123456789abcdefghijABCDEFGHIJ012345";
const PW = "Sunset99!xQ";
const INPUT = `I pasted my key ${AWS} by mistake\nand DB_PASSWORD=${PW}\nrepo at /home/alice/src/app\n`;

let repo: TempRepo | undefined;
afterEach(() => {
  repo?.cleanup();
  repo = undefined;
});

describe("aiflare redact", () => {
  test("prints the redacted text of a file", async () => {
    repo = tempRepo();
    writeFileSync(join(repo.root, "notes.txt"), INPUT);
    const r = await runBin(["redact", "notes.txt"], { cwd: repo.root, env: repo.env });
    expect(r.code).toBe(0);
    expect(r.stdout).toBe("I pasted my key <REDACTED:aws-access-key-id> by mistake\nand DB_PASSWORD=<REDACTED:password-assignment>\nrepo at ~/src/app\n");
  });

  test("reads stdin with - and with no argument", async () => {
    repo = tempRepo();
    for (const args of [["redact", "-"], ["redact"]]) {
      const r = await runBin(args, { cwd: repo.root, env: repo.env, stdin: `token ${GHP}\n` });
      expect(r.code).toBe(0);
      expect(r.stdout).toBe("token <REDACTED:github-pat>\n");
    }
  });

  test("--report lists kind and line, never the secret", async () => {
    repo = tempRepo();
    const r = await runBin(["redact", "--report"], { cwd: repo.root, env: repo.env, stdin: INPUT });
    expect(r.code).toBe(0);
    expect(r.stdout).toBe("line     1  aws-access-key-id\nline     2  password-assignment\n2 findings\n");
    expect(r.stdout + r.stderr).not.toContain(AWS);
    expect(r.stdout + r.stderr).not.toContain(PW);
  });

  test("--json and --report --json", async () => {
    repo = tempRepo();
    const r = await runBin(["redact", "--json"], { cwd: repo.root, env: repo.env, stdin: INPUT });
    expect(JSON.parse(r.stdout)).toEqual({
      text: "I pasted my key <REDACTED:aws-access-key-id> by mistake\nand DB_PASSWORD=<REDACTED:password-assignment>\nrepo at ~/src/app\n",
      findings: [
        { kind: "aws-access-key-id", line: 1 },
        { kind: "password-assignment", line: 2 },
      ],
    });
    const rep = await runBin(["redact", "--report", "--json"], { cwd: repo.root, env: repo.env, stdin: INPUT });
    expect(JSON.parse(rep.stdout)).toEqual({ findings: [{ kind: "aws-access-key-id", line: 1 }, { kind: "password-assignment", line: 2 }] });
  });

  test("a JSONL transcript stays valid JSON line by line", async () => {
    repo = tempRepo();
    const lines = [
      { type: "user", uuid: "123e4567-e89b-12d3-a456-426614174000", timestamp: "2025-01-02T03:04:05.678Z", message: { role: "user", content: `export GITHUB_TOKEN=${GHP}` } },
      { type: "assistant", cwd: "/home/alice/app", message: { role: "assistant", content: [{ type: "text", text: "Done." }] } },
    ];
    writeFileSync(join(repo.root, "s.jsonl"), lines.map((l) => JSON.stringify(l)).join("\n") + "\n");
    const r = await runBin(["redact", "s.jsonl"], { cwd: repo.root, env: repo.env });
    expect(r.code).toBe(0);
    const out = r.stdout.trimEnd().split("\n").map((l) => JSON.parse(l));
    expect(out[0].message.content).toBe("export GITHUB_TOKEN=<REDACTED:github-pat>");
    expect(out[0].uuid).toBe(lines[0]!.uuid);
    expect(out[0].timestamp).toBe(lines[0]!.timestamp);
    expect(out[1].cwd).toBe("~/app");
  });

  test("uses redact: patterns and allow from aiflare.yml", async () => {
    repo = tempRepo();
    writeFileSync(join(repo.root, "aiflare.yml"), `redact:\n  patterns:\n    - kind: acme-license\n      pattern: "ACME-[0-9]{4}-[0-9]{4}"\n  allow:\n    - "${PW}"\n`);
    const r = await runBin(["redact"], { cwd: join(repo.root), env: repo.env, stdin: `lic ACME-1234-5678\nDB_PASSWORD=${PW}\n` });
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(`lic <REDACTED:acme-license>\nDB_PASSWORD=${PW}\n`);
  });

  test("refuses (exit 1, nothing printed) when an allowlisted hard secret would be stored", async () => {
    repo = tempRepo();
    writeFileSync(join(repo.root, "aiflare.yml"), `redact:\n  allow:\n    - ${AWS}\n`);
    const r = await runBin(["redact"], { cwd: repo.root, env: repo.env, stdin: INPUT });
    expect(r.code).toBe(1);
    expect(r.stdout).toBe("");
    expect(r.stderr).toContain("aws-access-key-id");
    expect(r.stderr).toContain("redact.allow");
    expect(r.stderr).not.toContain(AWS);
  });

  test("works outside a repository, and reports a missing file or a bad config", async () => {
    repo = tempRepo();
    const outside = await runBin(["redact"], { cwd: repo.home, env: repo.env, stdin: `k ${AWS}\n` });
    expect(outside.stdout).toBe("k <REDACTED:aws-access-key-id>\n");
    const missing = await runBin(["redact", "nope.txt"], { cwd: repo.root, env: repo.env });
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain("nope.txt: no such file");
    writeFileSync(join(repo.root, "aiflare.yml"), "redact:\n  patterns:\n    - kind: x\n      pattern: '(oops'\n");
    const bad = await runBin(["redact"], { cwd: repo.root, env: repo.env, stdin: "x\n" });
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain("redact.patterns[0].pattern");
  });

  test("a file larger than one read: streamed out whole, with finding lines counted from the start", async () => {
    repo = tempRepo();
    // ~3 MB of JSON lines (with characters of two and three bytes, so reads end inside one) and plain-text blocks
    const lines: string[] = [];
    const secretLines: number[] = [];
    for (let i = 0; lines.length < 24_000; i++) {
      if (i % 5000 === 4999) {
        lines.push(`plain text with a key ${GHP} in it`, "and a second plain line");
        secretLines.push(lines.length - 1);
      } else lines.push(JSON.stringify({ i, text: `ünïcödé → ${"x".repeat(90)} at /home/alice/p${i}` }));
    }
    lines.push(JSON.stringify({ last: `key ${AWS}` }));
    secretLines.push(lines.length);
    writeFileSync(join(repo.root, "big.jsonl"), `${lines.join("\n")}\n`);
    const r = await runBin(["redact", "big.jsonl"], { cwd: repo.root, env: repo.env });
    expect(r.code).toBe(0);
    const out = r.stdout.split("\n");
    expect(out.length).toBe(lines.length + 1);
    expect(out[10]).toBe(JSON.stringify({ i: 10, text: `ünïcödé → ${"x".repeat(90)} at ~/p10` }));
    expect(r.stdout).not.toContain(GHP);
    expect(r.stdout).not.toContain(AWS);
    expect(r.stdout).not.toContain("/home/alice");
    const report = await runBin(["redact", "big.jsonl", "--report", "--json"], { cwd: repo.root, env: repo.env });
    const findings = JSON.parse(report.stdout).findings as { kind: string; line: number }[];
    expect(findings.filter((f) => f.kind !== "home-directory" && f.kind !== "home-path").map((f) => f.line)).toEqual(secretLines);
    const json = await runBin(["redact", "big.jsonl", "--json"], { cwd: repo.root, env: repo.env });
    expect(JSON.parse(json.stdout).text).toBe(r.stdout);
  });
});
