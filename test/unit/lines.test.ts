import { describe, expect, test } from "bun:test";
import { LineReader } from "../../src/util/lines.ts";

const enc = new TextEncoder();
const dec = new TextDecoder();

/** Feeds `chunks` through a reader capped at `max`: the lines it gives and the long lines it reports. */
function run(chunks: string[], max: number): { lines: string[]; long: [number, number][] } {
  const long: [number, number][] = [];
  const reader = new LineReader(max, (bytes, line) => long.push([bytes, line]));
  const lines: string[] = [];
  for (const c of chunks) for (const l of reader.push(enc.encode(c))) lines.push(dec.decode(l));
  for (const l of reader.end()) lines.push(dec.decode(l));
  return { lines, long };
}

describe("LineReader", () => {
  test.each([
    ["lines within and across chunks", ["a\nb", "c\n", "d"], 10, ["a", "bc", "d"], []],
    ["a line exactly at the cap is kept", ["12345\n"], 5, ["12345"], []],
    ["a line one byte over is skipped and reported", ["123456\nok\n"], 5, ["ok"], [[6, 1]]],
    ["a long line spread over chunks is skipped whole", ["x\n12", "345", "678", "9\ny"], 5, ["x", "y"], [[9, 2]]],
    ["a long last line without a newline", ["ok\n", "1234567"], 5, ["ok"], [[7, 2]]],
    ["empty lines stay lines", ["\n\na\n"], 5, ["", "", "a"], []],
  ] as const)("%s", (_name, chunks, max, lines, long) => {
    expect(run([...chunks], max)).toEqual({ lines: [...lines], long: long.map((l) => [...l]) });
  });

  test("a chunk's buffer may be reused: the unfinished line is copied", () => {
    const reader = new LineReader(100, () => {});
    const buf = enc.encode("abc");
    expect(reader.push(buf)).toEqual([]);
    buf.set(enc.encode("zzz"));
    expect(reader.push(enc.encode("d\n")).map((l) => dec.decode(l))).toEqual(["abcd"]);
  });
});
