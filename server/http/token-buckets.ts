interface Bucket {
  tokens: number;
  at: number;
}

const MINUTE_MS = 60_000;
/** Full buckets are forgotten (a new one starts full) every this many uses. */
const SWEEP_EVERY = 1_000;

/**
 * A token bucket per caller: `perMinute` tokens a minute, up to `capacity` saved up. Full
 * buckets are forgotten, so memory follows the callers of the last minute only.
 */
export class TokenBuckets {
  private readonly buckets = new Map<string, Bucket>();
  private readonly perMs: number;
  private uses = 0;

  constructor(
    private readonly perMinute: number,
    private readonly capacity: number,
    private readonly clock: () => number,
  ) {
    this.perMs = perMinute / MINUTE_MS;
  }

  /** Seconds until `caller` has a token; 0 when it has one now. */
  waitSeconds(caller: string): number {
    const bucket = this.refilled(caller);
    return bucket.tokens >= 1 ? 0 : Math.ceil((1 - bucket.tokens) / this.perMs / 1000);
  }

  /** Takes a token from `caller` if there is one; returns the seconds to wait when there is not. */
  take(caller: string): number {
    const wait = this.waitSeconds(caller);
    if (wait === 0) this.buckets.get(caller)!.tokens -= 1;
    return wait;
  }

  /** Returns a token taken from `caller` for something that turned out not to count. */
  giveBack(caller: string): void {
    const bucket = this.refilled(caller);
    bucket.tokens = Math.min(this.capacity, bucket.tokens + 1);
  }

  private refilled(caller: string): Bucket {
    const now = this.clock();
    if (++this.uses % SWEEP_EVERY === 0) {
      for (const [name, bucket] of this.buckets) if (now - bucket.at >= (this.capacity / this.perMinute) * MINUTE_MS) this.buckets.delete(name);
    }
    let bucket = this.buckets.get(caller);
    if (!bucket) {
      bucket = { tokens: this.capacity, at: now };
      this.buckets.set(caller, bucket);
    }
    bucket.tokens = Math.min(this.capacity, bucket.tokens + (now - bucket.at) * this.perMs);
    bucket.at = now;
    return bucket;
  }
}
