/**
 * The checks every hook runs on what it is given (session ids, commit hashes, model names, AIFLARE_RECALL, a linked
 * worktree's .git file) are loops over characters, not regular expressions: table-driven against the patterns they
 * stand for.
 */
import { describe, expect, test } from "bun:test";
import { shortName } from "../../src/agents/payload.ts";
import { recallOffByEnv } from "../../src/core/config-files.ts";
import { gitdirLine } from "../../src/core/repo.ts";
import { FULL_HASH_RE, isFullHash, isValidSessionId } from "../../src/util/ids.ts";

const HASH = "0123456789abcdef0123456789abcdef01234567";

describe("the hooks' checks agree with the patterns they stand for", () => {
  const ids = [
    "", ".", "..", "...", "a", "A-b_c.d", "2c4f8e1a-0b7d-4c2e-9f3a-1d2e3f4a5b6c", "x".repeat(128), "x".repeat(129),
    "a/b", "a b", "a\u0000", "é", "a\nb", "-", "_", "..a", "a..", "ses\u0131on", "\u212a", "0",
  ];
  for (const id of ids) {
    test(`session id ${JSON.stringify(id.length > 20 ? `${id.slice(0, 10)}…(${id.length})` : id)}`, () => {
      expect(isValidSessionId(id)).toBe(/^[A-Za-z0-9._-]{1,128}$/.test(id) && id !== "." && id !== "..");
    });
  }
  test("a session id that is not a string", () => {
    for (const v of [undefined, null, 1, {}, ["a"]]) expect(isValidSessionId(v)).toBe(false);
  });

  const hashes = [HASH, HASH.toUpperCase(), HASH.slice(1), `${HASH}0`, `${HASH.slice(0, 39)}g`, `${HASH.slice(0, 39)}\n`, "", " ".repeat(40)];
  for (const h of hashes) {
    test(`commit hash ${JSON.stringify(h)}`, () => expect(isFullHash(h)).toBe(FULL_HASH_RE.test(h)));
  }

  const names = ["claude-opus-4-1", "", "x".repeat(200), "x".repeat(201), "a\u0000b", "a\u001fb", "a\u007fb", "a\u0085b", "a\u009fb", "a\u00a0b", "模型", "a\u2028b", "a\ud83d\ude00b"];
  for (const n of names) {
    test(`model name ${JSON.stringify(n.length > 20 ? `${n.slice(0, 10)}…(${n.length})` : n)}`, () => {
      expect(shortName(n)).toBe(n.length > 0 && n.length <= 200 && !/[\p{Cc}]/u.test(n) ? n : undefined);
    });
  }
  test("a model name that is not a string", () => {
    for (const v of [undefined, null, 1, {}]) expect(shortName(v)).toBeUndefined();
  });

  const recall = [undefined, "", "0", "1", "false", "FALSE", " Off ", "no", "No\n", "nope", "off0", "true", "yes", "ſalse", "0 0"];
  for (const v of recall) {
    test(`AIFLARE_RECALL=${JSON.stringify(v)}`, () => {
      expect(recallOffByEnv({ AIFLARE_RECALL: v })).toBe(/^(0|false|off|no)$/i.test(v?.trim() ?? ""));
    });
  }
});

describe("a linked worktree's .git file", () => {
  const texts = [
    "gitdir: /a/b/.git/worktrees/x\n", "gitdir:/a/b\n", "gitdir:   /a/b  \r\n", "gitdir: rel/path", "gitdir:\n",
    "other: x\ngitdir: /second\n", " gitdir: /indented\n", "GITDIR: /upper\n", "", "\n\n",
    "gitdir: /a b/c d\n", "gitdir: /x\u00a0\n", "gitdir:\t/tab\t\n", "x\r\ngitdir: /crlf\r\n",
  ];
  for (const t of texts) {
    test(JSON.stringify(t), () => {
      expect(gitdirLine(t)).toBe(/^gitdir:\s*(.+?)\s*$/m.exec(t)?.[1] || undefined);
    });
  }
  test("an empty gitdir line names nothing (the pattern ran on into the next line, naming no directory that exists)", () => {
    expect(gitdirLine("gitdir:   \n")).toBeUndefined();
    expect(gitdirLine("gitdir: \ngitdir: /after-empty\n")).toBeUndefined();
  });
});
