import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { EventFeed, type EventType, type PublishedEvent } from '../../server/domain/shared/events';
import type { ReviewRecord } from '../../server/domain/reviews/records';
import { DecisionWaiters } from '../../server/domain/reviews/waiters';

const decided = (id: number) => ({ id, status: 'approved' }) as ReviewRecord;

let nextEventId = 1;
/** An event as the unit of work would publish it after its commit. */
const committed = (type: EventType, review: ReviewRecord): PublishedEvent =>
  ({ id: nextEventId++, type, organization_id: null, agent_id: null, review_id: review.id, payload: review }) as PublishedEvent;

describe('DecisionWaiters', () => {
  it('wakes the waiters of a review when its decision is published, and only those', async () => {
    const bus = new EventFeed();
    const waiters = new DecisionWaiters(bus);
    const first = waiters.wait(1, 60_000);
    const second = waiters.wait(1, 60_000);
    const other = waiters.wait(2, 60_000);
    expect(waiters.count).toBe(3);

    bus.publish(committed('review.decided', decided(1)));

    await expect(first).resolves.toEqual({ kind: 'decided', review: decided(1) });
    await expect(second).resolves.toEqual({ kind: 'decided', review: decided(1) });
    expect(waiters.count).toBe(1);
    bus.publish(committed('review.decided', decided(2)));
    await expect(other).resolves.toMatchObject({ kind: 'decided' });
    expect(waiters.count).toBe(0);
  });

  describe('time limits', () => {
    beforeEach(() => void vi.useFakeTimers());
    afterEach(() => void vi.useRealTimers());

    it('times out without leaving a timer or waiter behind', async () => {
      const waiters = new DecisionWaiters(new EventFeed());
      const outcome = waiters.wait(1, 1_000);
      vi.advanceTimersByTime(999);
      expect(waiters.count).toBe(1);
      vi.advanceTimersByTime(1);
      await expect(outcome).resolves.toEqual({ kind: 'timeout' });
      expect(waiters.count).toBe(0);
      expect(vi.getTimerCount()).toBe(0);
    });

    it('times out each wait at its own limit, a shorter one started later first, one that left early not at all', async () => {
      const waiters = new DecisionWaiters(new EventFeed());
      const timedOut: number[] = [];
      const leaving = new AbortController();
      const waitOn = (reviewId: number, timeoutMs: number, signal?: AbortSignal): Promise<void> =>
        waiters.wait(reviewId, timeoutMs, signal).then((outcome) => void (outcome.kind === 'timeout' && timedOut.push(reviewId)));
      const all = [waitOn(1, 3_000), waitOn(2, 3_000), waitOn(5, 500, leaving.signal), waitOn(3, 2_000), waitOn(6, 1_500, leaving.signal), waitOn(4, 1_000)];
      leaving.abort();
      let elapsedMs = 0;
      for (const [untilMs, expected] of [
        [999, []],
        [1_000, [4]],
        [1_999, [4]],
        [2_000, [4, 3]],
        [2_999, [4, 3]],
        [3_000, [4, 3, 1, 2]],
      ] as const) {
        await vi.advanceTimersByTimeAsync(untilMs - elapsedMs);
        elapsedMs = untilMs;
        expect({ elapsedMs, timedOut }).toEqual({ elapsedMs, timedOut: expected });
      }
      await Promise.all(all);
      expect(vi.getTimerCount()).toBe(0);
    });

    it('leaves no timer behind once every wait has ended before its limit', async () => {
      const bus = new EventFeed();
      const waiters = new DecisionWaiters(bus);
      const controller = new AbortController();
      const outcomes = [waiters.wait(1, 60_000), waiters.wait(2, 30_000, controller.signal), waiters.wait(3, 90_000)];
      controller.abort();
      bus.publish(committed('review.decided', decided(1)));
      expect(vi.getTimerCount()).toBe(1);
      waiters.wake(3, { kind: 'aborted' });
      expect((await Promise.all(outcomes)).map((outcome) => outcome.kind)).toEqual(['decided', 'aborted', 'aborted']);
      expect(vi.getTimerCount()).toBe(0);
    });
  });

  it('releases a waiter when its signal aborts, and a later decision finds nobody', async () => {
    const bus = new EventFeed();
    const waiters = new DecisionWaiters(bus);
    const controller = new AbortController();
    const outcome = waiters.wait(1, 60_000, controller.signal);
    controller.abort();
    await expect(outcome).resolves.toEqual({ kind: 'aborted' });
    expect(waiters.count).toBe(0);
    bus.publish(committed('review.decided', decided(1)));
  });

  it('lets one of a review\'s waiters go without losing the others, first, middle or last', async () => {
    for (const leaving of [0, 1, 2]) {
      const bus = new EventFeed();
      const waiters = new DecisionWaiters(bus);
      const controllers = [new AbortController(), new AbortController(), new AbortController()];
      const outcomes = controllers.map((controller) => waiters.wait(1, 60_000, controller.signal));
      controllers[leaving].abort();
      bus.publish(committed('review.decided', decided(1)));
      const kinds = (await Promise.all(outcomes)).map((outcome) => outcome.kind);
      expect(kinds).toEqual(kinds.map((_, n) => (n === leaving ? 'aborted' : 'decided')));
      expect(waiters.count).toBe(0);
      expect(waiters.waitedReviews()).toEqual([]);
    }
  });

  it('answers every waiter with shutdown and refuses new ones', async () => {
    const waiters = new DecisionWaiters(new EventFeed());
    const pending = [waiters.wait(1, 60_000), waiters.wait(2, 60_000)];
    waiters.shutdown();
    expect(await Promise.all(pending)).toEqual([{ kind: 'shutdown' }, { kind: 'shutdown' }]);
    await expect(waiters.wait(3, 60_000)).resolves.toEqual({ kind: 'shutdown' });
    expect(waiters.count).toBe(0);
  });

  it('settles each waiter once even when woken twice', async () => {
    const bus = new EventFeed();
    const waiters = new DecisionWaiters(bus);
    const outcome = waiters.wait(1, 60_000);
    bus.publish(committed('review.decided', decided(1)));
    waiters.wake(1, { kind: 'aborted' });
    await expect(outcome).resolves.toMatchObject({ kind: 'decided' });
    expect(waiters.count).toBe(0);
  });
});

describe('EventFeed', () => {
  it('keeps delivering to other listeners when one throws, and reports the failure', () => {
    const failures: unknown[] = [];
    const bus = new EventFeed((_event, error) => failures.push(error));
    const seen: number[] = [];
    bus.on('review.created', () => {
      throw new Error('listener bug');
    });
    bus.on('review.created', (review) => seen.push(review.id));
    bus.publish(committed('review.created', decided(7)));
    expect(seen).toEqual([7]);
    expect(failures).toHaveLength(1);
  });

  it('stops delivering to a listener after it unsubscribes', () => {
    const bus = new EventFeed();
    const seen: number[] = [];
    const off = bus.on('review.created', (review) => seen.push(review.id));
    bus.publish(committed('review.created', decided(1)));
    off();
    bus.publish(committed('review.created', decided(2)));
    expect(seen).toEqual([1]);
    expect(bus.listenerCount).toBe(0);
  });
});
