/**
 * Splits a byte stream into lines of at most `max` bytes. A longer line is dropped as soon as it passes the cap and
 * skipped up to its newline, so what is held at any time is bounded by the cap, whatever the input holds.
 */
export class LineReader {
  private parts: Uint8Array[] = [];
  private size = 0;
  /** bytes of the over-long line being skipped; -1 while no line is skipped */
  private skipped = -1;
  private line = 0;

  /** `onLong` hears of each line longer than `max` bytes: its length and its number (1-based). */
  constructor(
    private readonly max: number,
    private readonly onLong: (bytes: number, line: number) => void,
  ) {}

  /** The lines `chunk` completes, without their newline (a trailing `\r` is kept). */
  push(chunk: Uint8Array): Uint8Array[] {
    const out: Uint8Array[] = [];
    let start = 0;
    for (let nl = chunk.indexOf(10); nl >= 0; nl = chunk.indexOf(10, start)) {
      const line = this.finish(chunk.subarray(start, nl));
      if (line) out.push(line);
      start = nl + 1;
    }
    // the chunk's buffer may be reused by its reader: keep a copy of the unfinished line
    if (start < chunk.length) this.take(new Uint8Array(chunk.subarray(start)));
    return out;
  }

  /** The last line, when the stream does not end with a newline. */
  end(): Uint8Array[] {
    if (this.size === 0 && this.skipped < 0) return [];
    const line = this.finish(new Uint8Array(0));
    return line ? [line] : [];
  }

  private take(piece: Uint8Array): void {
    if (this.skipped >= 0) {
      this.skipped += piece.length;
      return;
    }
    if (this.size + piece.length > this.max) {
      this.skipped = this.size + piece.length;
      this.parts = [];
      this.size = 0;
      return;
    }
    this.parts.push(piece);
    this.size += piece.length;
  }

  /** Ends the current line with `tail`: the whole line, or null when it was too long. */
  private finish(tail: Uint8Array): Uint8Array | null {
    this.line++;
    if (this.parts.length === 0 && this.skipped < 0 && tail.length <= this.max) return tail;
    this.take(tail);
    if (this.skipped >= 0) {
      this.onLong(this.skipped, this.line);
      this.skipped = -1;
      return null;
    }
    const line = new Uint8Array(this.size);
    let at = 0;
    for (const p of this.parts) {
      line.set(p, at);
      at += p.length;
    }
    this.parts = [];
    this.size = 0;
    return line;
  }
}
