/**
 * How long a decision waits before it is sent. Until then nobody has received it, so Undo
 * truly takes it back; a busy reviewer gets a moment to catch a wrong click.
 */
export const UNDO_WINDOW_MS = 5_000;

/** What holds a decision for its window: `send` runs when it ends, unless the returned cancel runs first. */
export interface DecisionHold {
  hold(send: () => void, ms: number): () => void;
}

const onTheClock: DecisionHold = {
  hold(send, ms) {
    const timer = setTimeout(send, ms);
    return () => clearTimeout(timer);
  },
};

let current: DecisionHold = onTheClock;

export function decisionHold(): DecisionHold {
  return current;
}

/**
 * Replaces what holds decisions, for stores created from now on; null puts the clock back. The
 * store's tests end a window when they choose rather than wait five seconds for each.
 */
export function holdDecisionsWith(hold: DecisionHold | null): void {
  current = hold ?? onTheClock;
}
