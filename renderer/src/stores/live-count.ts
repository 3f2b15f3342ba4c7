import { computed, ref, type ComputedRef } from 'vue';

export interface LiveCount {
  readonly value: ComputedRef<number>;
  /** Whether a read has answered yet. */
  readonly known: ComputedRef<boolean>;
  /** A live event changed the number by `delta`. */
  add(delta: number): void;
  /** Reads the number again; resolves once a read has answered with nothing left in doubt. */
  refresh(): Promise<void>;
}

/**
 * A number read from the server and kept current by live events in between. Events that
 * reached the page before a read was sent are in its answer; those that arrive after it are
 * added on top. An event that arrives while the read is under way may or may not be in the
 * answer, so such a read is followed by another: once a read crosses no event, the number is
 * exact again.
 */
export function liveCount(read: () => Promise<number>): LiveCount {
  const answer = ref<number | null>(null);
  /** Events not yet known to be in `answer`, in the order they arrived. */
  const changes = ref<Array<{ arrival: number; delta: number }>>([]);
  let arrivals = 0;
  let reading = false;
  let crossed = false;

  function add(delta: number): void {
    changes.value.push({ arrival: arrivals++, delta });
    if (reading) crossed = true;
  }

  async function refresh(): Promise<void> {
    if (reading) {
      crossed = true;
      return;
    }
    reading = true;
    crossed = false;
    const sentAfter = arrivals;
    try {
      answer.value = await read();
      changes.value = changes.value.filter((change) => change.arrival >= sentAfter);
    } finally {
      reading = false;
    }
    if (crossed) await refresh();
  }

  return {
    value: computed(() => (answer.value ?? 0) + changes.value.reduce((sum, change) => sum + change.delta, 0)),
    known: computed(() => answer.value !== null),
    add,
    refresh,
  };
}
