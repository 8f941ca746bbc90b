import { fstatSync, type Stats } from "node:fs";

/** Largest payload a hook reads; anything bigger is not a hook payload worth parsing. */
export const MAX_STDIN_BYTES = 8 * 1024 * 1024;

export interface StdinResult {
  text: string;
  /** why the text is incomplete or absent, for the log */
  problem?: "tty" | "too-large" | "timeout" | "error";
}

/**
 * Reads stdin with a size cap and a deadline, so a hook never hangs on a terminal, a FIFO
 * nobody writes to, or a payload of unbounded size.
 */
export async function readStdin(maxBytes = MAX_STDIN_BYTES, timeoutMs = 2000): Promise<StdinResult> {
  let st: Stats | undefined;
  try {
    st = fstatSync(0);
  } catch {
    // fstat failing leaves the stream path below to report the error
  }
  // Only a character device can be a terminal; node:tty costs milliseconds to load, so pipes never load it.
  if (st?.isCharacterDevice()) {
    const { isatty } = await import("node:tty");
    if (isatty(0)) return { text: "", problem: "tty" };
  }
  // A regular file redirected to stdin: check its size before reading.
  if (st?.isFile() && st.size > maxBytes) return { text: "", problem: "too-large" };
  const stream = Bun.stdin.stream();
  const reader = stream.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const deadline = new Promise<"timeout">((resolve) => {
    timer = setTimeout(() => resolve("timeout"), timeoutMs);
  });
  try {
    for (;;) {
      const next = await Promise.race([reader.read(), deadline]);
      if (next === "timeout") return { text: "", problem: "timeout" };
      if (next.done) break;
      total += next.value.byteLength;
      if (total > maxBytes) return { text: "", problem: "too-large" };
      chunks.push(next.value);
    }
    return { text: Buffer.concat(chunks).toString("utf8") };
  } catch {
    return { text: "", problem: "error" };
  } finally {
    clearTimeout(timer);
    reader.cancel().catch(() => {});
  }
}
