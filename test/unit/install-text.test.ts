import { describe, expect, test } from "bun:test";
import { currentBinary, firstShellWord, hookEventOf, isAiflareCommand, shellQuote } from "../../src/core/install/binary.ts";
import {
  addDirective,
  addGitignoreLines,
  mentionsSkill,
  removeDirective,
  removeGitignoreLines,
} from "../../src/core/install/text-edits.ts";
import { DIRECTIVE_LINE, gitHookText, skillText } from "../../src/core/install/templates.ts";

describe(".gitignore lines", () => {
  const cases: [string, string | null, string][] = [
    ["no file", null, ".context-capture/\naiflare.yml\n"],
    ["empty", "", ".context-capture/\naiflare.yml\n"],
    ["trailing newline", "node_modules/\n", "node_modules/\n.context-capture/\naiflare.yml\n"],
    ["no trailing newline", "node_modules/", "node_modules/\n.context-capture/\naiflare.yml\n"],
    ["one already there (other spelling)", "/.context-capture\n", "/.context-capture\naiflare.yml\n"],
    ["both already there", "aiflare.yml\n.context-capture/\n", "aiflare.yml\n.context-capture/\n"],
    ["commented out does not count", "# aiflare.yml\n", "# aiflare.yml\n.context-capture/\naiflare.yml\n"],
  ];
  for (const [name, before, after] of cases) {
    test(name, () => {
      expect(addGitignoreLines(before)).toBe(before !== null && after === before ? before : after);
      const once = addGitignoreLines(before)!;
      expect(addGitignoreLines(once)).toBe(once);
      const removed = removeGitignoreLines(once, before);
      if (before === null || before === "") expect(removed).toBeNull();
      else expect(removed!.replace(/\n$/, "")).toBe(before.replace(/\n$/, ""));
    });
  }
  test("lines the user had before are not removed", () => {
    expect(removeGitignoreLines("aiflare.yml\n.context-capture/\n", "aiflare.yml\n")).toBe("aiflare.yml\n");
  });
  test("lines asked to stay are kept though install added them", () => {
    expect(removeGitignoreLines(".context-capture/\naiflare.yml\n", null, ["aiflare.yml"])).toBe("aiflare.yml\n");
    expect(removeGitignoreLines("dist/\n.context-capture/\naiflare.yml\n", "dist/\n", ["aiflare.yml"])).toBe("dist/\naiflare.yml\n");
  });
});

describe("CLAUDE.md directive", () => {
  test("appended after a blank line, once; removed exactly", () => {
    const before = "# Project\n\nUse bun.\n";
    const after = addDirective(before, DIRECTIVE_LINE)!;
    expect(after).toBe(`${before}\n${DIRECTIVE_LINE}\n`);
    expect(addDirective(after, DIRECTIVE_LINE)).toBe(after);
    expect(removeDirective(after, DIRECTIVE_LINE)).toBe(before);
  });
  test("a file that already mentions the skill is left alone", () => {
    const t = "Always run the context-capture skill after committing.\n";
    expect(mentionsSkill(t)).toBe(true);
    expect(addDirective(t, DIRECTIVE_LINE)).toBe(t);
  });
  test("a new file holds only the directive, and removing it leaves nothing", () => {
    expect(addDirective(null, DIRECTIVE_LINE)).toBe(`${DIRECTIVE_LINE}\n`);
    expect(removeDirective(`${DIRECTIVE_LINE}\n`, DIRECTIVE_LINE)).toBeNull();
  });
  test("the directive names the skill, fits on one line", () => {
    expect(DIRECTIVE_LINE).toContain(".claude/skills/context-capture/SKILL.md");
    expect(DIRECTIVE_LINE).not.toContain("\n");
  });
});

describe("binary paths and commands", () => {
  const paths = ["/usr/local/bin/aiflare", "/home/a b/aiflare", "/opt/it's/aiflare", "/x/$HOME/aiflare"];
  for (const p of paths) {
    test(`quoting round-trips ${p}`, () => {
      const cmd = `${shellQuote(p)} hook stop`;
      expect(firstShellWord(cmd)).toBe(p);
      expect(isAiflareCommand(cmd)).toBe(true);
      expect(hookEventOf(cmd)).toBe("stop");
      // the shell agrees
      const r = Bun.spawnSync(["sh", "-c", `printf %s ${shellQuote(p)}`]);
      expect(r.stdout.toString()).toBe(p);
    });
  }
  test("other commands are not aiflare's", () => {
    for (const c of ["echo hi", "npx prettier --write", "aiflare capture --title x", "/bin/hook stop"]) {
      expect(isAiflareCommand(c)).toBe(false);
    }
  });
  test("running from source is refused with the way out", () => {
    expect(() => currentBinary({ execPath: "/usr/bin/bun" })).toThrow(/bun run build/);
  });
  test("a compiled binary on PATH is named by its PATH entry", () => {
    const dir = require("node:fs").mkdtempSync(`${require("node:os").tmpdir()}/aiflare-bin-`);
    const real = `${dir}/real-aiflare`;
    require("node:fs").writeFileSync(real, "#!/bin/sh\n", { mode: 0o755 });
    require("node:fs").mkdirSync(`${dir}/bin`);
    require("node:fs").symlinkSync(real, `${dir}/bin/aiflare`);
    expect(currentBinary({ execPath: real, path: `/nonexistent:${dir}/bin` }).bin).toBe(`${dir}/bin/aiflare`);
    expect(currentBinary({ execPath: real, path: "/nonexistent" }).bin).toBe(real);
    require("node:fs").rmSync(dir, { recursive: true });
  });
});

describe("templates", () => {
  test("the skill has the capture command with every field and the binary path", () => {
    const s = skillText("/opt/aiflare");
    expect(s).toStartWith("---\nname: context-capture\n");
    for (const flag of ["--commit-hash", "--title", "--intent", "--alternatives", "--diff-summary", "--tag"]) {
      expect(s).toContain(flag);
    }
    expect(s).toContain("/opt/aiflare capture");
    expect(s).not.toContain("{{");
  });
  test("the git hook wrapper is valid sh with the binary and hook filled in", () => {
    const text = gitHookText("pre-push", "'/a b/aiflare'");
    expect(text).toContain("AIFLARE_BIN='/a b/aiflare'");
    expect(text).toContain("hook_name='pre-push'");
    const r = Bun.spawnSync(["sh", "-n", "/dev/stdin"], { stdin: new Blob([text]) });
    expect(r.exitCode).toBe(0);
  });
});
