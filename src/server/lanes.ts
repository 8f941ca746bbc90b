/**
 * One write at a time per key in this process: a client flooding the write API waits behind its own requests
 * instead of taking turns with everyone else's. A key with too many writes in line, or a write that waited longer
 * than a client waits for its answer, is told to slow down. Holds only promises, so the server stays stateless.
 */
export class WriteLanes {
  private lanes = new Map<string, { tail: Promise<void>; held: number }>();
  constructor(
    private maxHeld = 8,
    private maxWaitMs = 5_000,
  ) {}

  /** Waits for `id`'s turn and runs `fn`; null (without running it) when the line is full or the wait too long. */
  async run<T>(id: string, fn: () => Promise<T>): Promise<T | null> {
    let lane = this.lanes.get(id);
    if (!lane) {
      lane = { tail: Promise.resolve(), held: 0 };
      this.lanes.set(id, lane);
    }
    if (lane.held >= this.maxHeld) return null;
    lane.held++;
    const before = lane.tail;
    let release!: () => void;
    lane.tail = new Promise<void>((resolve) => (release = resolve));
    const mine = lane;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const turn = await Promise.race([
      before.then(() => true),
      new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), this.maxWaitMs))),
    ]);
    clearTimeout(timer);
    const leave = () => {
      release();
      if (--mine.held === 0 && this.lanes.get(id) === mine) this.lanes.delete(id);
    };
    if (!turn) {
      // given up: the next in line still waits for the one before this
      void before.then(leave);
      return null;
    }
    try {
      return await fn();
    } finally {
      leave();
    }
  }
}
