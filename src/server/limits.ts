/**
 * Per-process guards: a token bucket per key (429 for a client that sends too fast) and counts of failed key checks
 * per client and in total (429 for wrong keys once there are too many). They hold no data, only timing, so the server
 * stays stateless.
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

/**
 * Failed key checks, counted per client and in total within a window. A client over its own limit is refused until
 * the window ends; once the total is spent (many addresses, each under its limit), every client is. Only failures
 * come here: a valid key is never refused by this gate, so a team behind one address cannot be locked out by one
 * client sending wrong keys.
 */
export class FailureGate {
  private failures = new Map<string, { count: number; since: number }>();
  private total = { count: 0, since: -Infinity };
  constructor(
    private perClient: number,
    private overall: number,
    private windowMs = 60_000,
  ) {}

  /** Counts a failed attempt of `client`: 0 when counted, else the ms until it may fail again (not counted then). */
  fail(client: string, now = Date.now()): number {
    if (now - this.total.since >= this.windowMs) this.total = { count: 0, since: now };
    let f = this.failures.get(client);
    if (f && now - f.since >= this.windowMs) {
      this.failures.delete(client);
      f = undefined;
    }
    if (f && f.count >= this.perClient) return f.since + this.windowMs - now;
    if (this.total.count >= this.overall) return this.total.since + this.windowMs - now;
    this.total.count++;
    if (f) f.count++;
    else {
      if (this.failures.size >= MAX_TRACKED) this.forgetOld(now);
      this.failures.set(client, { count: 1, since: now });
    }
    return 0;
  }

  private forgetOld(now: number): void {
    for (const [client, f] of this.failures) if (now - f.since >= this.windowMs) this.failures.delete(client);
    if (this.failures.size >= MAX_TRACKED) this.failures.clear();
  }
}

/**
 * The client an address stands for: an IPv4 address, or an IPv6 address's /64 (one machine or home network holds a
 * whole /64, so counting single IPv6 addresses would let it rotate past its limit).
 */
export function clientOf(address: string): string {
  const a = address.trim().toLowerCase().replace(/^\[|\]$/g, "").replace(/%.*$/, "").slice(0, 100);
  const mapped = /^::ffff:(\d{1,3}(?:\.\d{1,3}){3})$/.exec(a);
  if (mapped) return mapped[1]!;
  if (!a.includes(":")) return a;
  const [head = "", tail] = a.split("::");
  const groups = head ? head.split(":") : [];
  if (tail !== undefined) {
    const rest = tail ? tail.split(":") : [];
    while (groups.length + rest.length < 8) groups.push("0");
    groups.push(...rest);
  }
  return `${groups
    .slice(0, 4)
    .map((g) => g.replace(/^0+(?=.)/, ""))
    .join(":")}::/64`;
}
