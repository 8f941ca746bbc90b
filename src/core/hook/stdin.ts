import { closeSync, constants, fstatSync, openSync, readSync, writeSync, type Stats } from "node:fs";

/** Largest payload a hook reads; anything bigger is not a hook payload worth parsing. */
export const MAX_STDIN_BYTES = 8 * 1024 * 1024;

export interface StdinResult {
  text: string;
  /** why the text is incomplete or absent, for the log */
  problem?: "tty" | "too-large" | "timeout" | "error";
}

/**
 * The payload's text. Plain Uint8Arrays and a TextDecoder rather than Buffer: the first use of Buffer costs a hook
 * more than reading its payload. The BOM is kept, as Buffer's decoding keeps it.
 */
function decode(chunks: Uint8Array[], total: number): string {
  let bytes = chunks[0] ?? new Uint8Array(0);
  if (chunks.length > 1) {
    bytes = new Uint8Array(total);
    let at = 0;
    for (const c of chunks) {
      bytes.set(c, at);
      at += c.byteLength;
    }
  }
  return new TextDecoder("utf-8", { ignoreBOM: true }).decode(bytes);
}

/** What was read without waiting: `done` once the writer has closed (or the file ended). */
interface Available {
  chunks: Uint8Array[];
  total: number;
  done: boolean;
}

/** Reads `fd` until end of data, EAGAIN (nothing more yet) or more than `maxBytes`. */
function readNow(fd: number, maxBytes: number, into: Available): void {
  for (;;) {
    const buf = new Uint8Array(64 * 1024);
    let n: number;
    try {
      n = readSync(fd, buf, 0, buf.length, null);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === "EAGAIN") return;
      throw err;
    }
    if (n === 0) {
      into.done = true;
      return;
    }
    into.total += n;
    into.chunks.push(buf.subarray(0, n));
    if (into.total > maxBytes) return;
  }
}

/**
 * What stdin holds already, read synchronously: the event loop, its streams and timers cost a hook more than
 * the read itself, and an agent has usually written the whole payload and closed the pipe by the time the hook
 * starts. A regular file never blocks; a pipe is opened a second time through /proc (Linux), non-blocking, so an
 * open pipe with nothing in it yet returns at once and is left to the reader with a deadline. Undefined when
 * stdin is neither (or cannot be opened so), and nothing was read.
 */
function readAvailable(st: Stats | undefined, maxBytes: number): Available | undefined {
  const got: Available = { chunks: [], total: 0, done: false };
  try {
    if (st?.isFile()) {
      readNow(0, maxBytes, got);
      return got;
    }
    if (!st?.isFIFO() || process.platform !== "linux") return undefined;
    const fd = openSync("/proc/self/fd/0", constants.O_RDONLY | constants.O_NONBLOCK);
    try {
      readNow(fd, maxBytes, got);
    } finally {
      closeSync(fd);
    }
    return got;
  } catch {
    // nothing lost when nothing was read: the stream reader below starts over
    return got.total === 0 ? undefined : got;
  }
}

/**
 * Reads stdin with a size cap and a deadline, so a hook never hangs on a terminal, a FIFO
 * nobody writes to, or a payload of unbounded size.
 *
 * A socket (what Node-based agents such as Claude Code give a hook as its stdin) cannot be reopened without
 * blocking as a pipe can, so it is read through the stream below. A plain blocking read of it would be about 0.5 ms
 * sooner (medians of 100 hooks started by Node), with no deadline: a caller that kept the socket open would hold
 * the hook; poll(2) bound through bun:ffi gives the deadline back but costs more to bind than it saves.
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
  const now = readAvailable(st, maxBytes);
  const chunks = now?.chunks ?? [];
  let total = now?.total ?? 0;
  if (total > maxBytes) return { text: "", problem: "too-large" };
  if (now?.done) return { text: decode(chunks, total) };
  const stream = Bun.stdin.stream();
  const reader = stream.getReader();
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
    return { text: decode(chunks, total) };
  } catch {
    return { text: "", problem: "error" };
  } finally {
    clearTimeout(timer);
    reader.cancel().catch(() => {});
  }
}

/**
 * Writes a hook's answer to stdout. A synchronous write(2) comes first: `process.stdout` is a stream whose first
 * use loads the stream machinery, which costs a hook more than everything else it does. Only a stdout that would
 * block (a full non-blocking pipe) takes the stream, with what is left.
 */
export async function writeStdout(text: string): Promise<void> {
  const buf = new TextEncoder().encode(text);
  let off = 0;
  try {
    while (off < buf.length) off += writeSync(1, buf, off, buf.length - off);
    return;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "EAGAIN") throw err;
  }
  const rest = buf.subarray(off);
  await new Promise<void>((resolve, reject) => process.stdout.write(rest, (err) => (err ? reject(err) : resolve())));
}
