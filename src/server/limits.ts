/**
 * Per-process guards: a token bucket per key (429 for a client that sends too fast) and a count of failed sign-ins
 * per address (429 once there are too many). They hold no data, only timing, so the server stays stateless.
 */

const MAX_TRACKED = 10_000;

/** A token bucket per id: `perSecond` sustained, `burst` at once. */
export class RateLimiter {
  private buckets = new Map<string, { tokens: number; at: number }>();
  constructor(
    private perSecond: number,
    private burst: number,
  ) {}

  /** Takes a token; 0 when allowed, else how many ms until one is free. */
  take(id: string, now = Date.now()): number {
    if (this.perSecond <= 0) return 0;
    let b = this.buckets.get(id);
    if (!b) {
      if (this.buckets.size >= MAX_TRACKED) this.buckets.clear();
      b = { tokens: this.burst, at: now };
      this.buckets.set(id, b);
    }
    b.tokens = Math.min(this.burst, b.tokens + ((now - b.at) / 1000) * this.perSecond);
    b.at = now;
    if (b.tokens >= 1) {
      b.tokens -= 1;
      return 0;
    }
    return Math.ceil(((1 - b.tokens) / this.perSecond) * 1000);
  }
}

/** Failed key checks per address within a window; over `limit`, the address waits until the window ends. */
export class FailureGate {
  private failures = new Map<string, { count: number; since: number }>();
  constructor(
    private limit: number,
    private windowMs = 60_000,
  ) {}

  /** 0 when the address may try, else the ms until it may. */
  wait(addr: string, now = Date.now()): number {
    const f = this.failures.get(addr);
    if (!f) return 0;
    if (now - f.since >= this.windowMs) {
      this.failures.delete(addr);
      return 0;
    }
    return f.count >= this.limit ? f.since + this.windowMs - now : 0;
  }

  fail(addr: string, now = Date.now()): void {
    const f = this.failures.get(addr);
    if (f && now - f.since < this.windowMs) f.count++;
    else {
      if (this.failures.size >= MAX_TRACKED) this.failures.clear();
      this.failures.set(addr, { count: 1, since: now });
    }
  }
}
