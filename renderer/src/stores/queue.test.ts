import { createPinia, setActivePinia } from 'pinia';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../../../test/support/server';
import { provideApi } from '../api';
import { ApiClient } from '../api/client';
import type { ReviewRecord } from '../api/types';
import { useQueueStore } from './queue';
import { matchesFilters, placeInOrder } from './review-list';
import { type DecisionHold, holdDecisionsWith } from './undo-window';

// The stores talk to the real API on loopback, as the dashboard does through its proxy.
let server: TestServer;

beforeAll(async () => {
  server = await startTestServer();
  provideApi(new ApiClient({ baseUrl: server.url, apiKey: () => null }));
});
afterAll(() => server.dispose());

/** Undo windows that end when the test says, rather than UNDO_WINDOW_MS after each decision. */
class WindowsTheTestEnds implements DecisionHold {
  private readonly open = new Set<() => void>();

  hold(send: () => void): () => void {
    this.open.add(send);
    return () => this.open.delete(send);
  }

  /** Ends every window open now: their decisions are sent. */
  endAll(): void {
    const sends = [...this.open];
    this.open.clear();
    for (const send of sends) send();
  }
}

const windows = new WindowsTheTestEnds();
beforeEach(() => {
  holdDecisionsWith(windows);
  setActivePinia(createPinia());
});
afterEach(() => holdDecisionsWith(null));

/** A decision whose undo window ends at once: it resolves once it has been sent. */
function decidedNow(queue: ReturnType<typeof useQueueStore>, id: number, input: Parameters<ReturnType<typeof useQueueStore>['decide']>[1]): Promise<void> {
  const sent = queue.decide(id, input);
  windows.endAll();
  return sent;
}

async function create(body: Partial<ReviewRecord> & { task_type: string }): Promise<ReviewRecord> {
  const response = await fetch(`${server.url}/reviews`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ proposed_action: 'do it', ...body }),
  });
  return (await response.json()) as ReviewRecord;
}

async function statusOf(id: number): Promise<ReviewRecord['status']> {
  return ((await (await fetch(`${server.url}/reviews/${id}`)).json()) as ReviewRecord).status;
}

describe('useQueueStore', () => {
  it('loads pending reviews most urgent first, oldest first within an urgency', async () => {
    const low = await create({ task_type: 'order-test', urgency: 'low' });
    const highOld = await create({ task_type: 'order-test', urgency: 'high' });
    const critical = await create({ task_type: 'order-test', urgency: 'critical' });
    const highNew = await create({ task_type: 'order-test', urgency: 'high' });
    const queue = useQueueStore();
    await queue.setFilters({ status: 'pending', task_type: 'order-test' });
    expect(queue.reviews.map((r) => r.id)).toEqual([critical.id, highOld.id, highNew.id, low.id]);
    expect(queue.total).toBe(4);
    expect(queue.selectedId).toBe(critical.id);
  });

  it('places a review created live where a reload would put it, and only if it matches the filters', async () => {
    const queue = useQueueStore();
    await create({ task_type: 'live-test', urgency: 'medium' });
    await queue.setFilters({ status: 'pending', task_type: 'live-test' });

    const critical = await create({ task_type: 'live-test', urgency: 'critical' });
    const other = await create({ task_type: 'another-type', urgency: 'critical' });
    queue.applyEvent('review.created', critical);
    queue.applyEvent('review.created', other);
    queue.applyEvent('review.created', critical);

    expect(queue.reviews[0].id).toBe(critical.id);
    expect(queue.reviews.some((r) => r.id === other.id)).toBe(false);
    expect(queue.total).toBe(2);
    const reloaded = useQueueStore();
    await reloaded.load();
    expect(reloaded.reviews.map((r) => r.id)).toEqual(queue.reviews.map((r) => r.id));
  });

  it('drops a review decided elsewhere, and tells the reviewer who was looking at it', async () => {
    const queue = useQueueStore();
    const review = await create({ task_type: 'elsewhere-test' });
    await queue.setFilters({ status: 'pending', task_type: 'elsewhere-test' });
    queue.select(review.id);

    queue.applyEvent('review.decided', {
      ...review,
      status: 'approved',
      decision: { id: 99, review_id: review.id, decision_type: 'approve', reviewer_id: null, reviewer_name: 'bo', modified_action: null, notes: null, created_at: new Date().toISOString(), receipt: null },
    });

    expect(queue.reviews).toEqual([]);
    expect(queue.total).toBe(0);
    expect(queue.selectedOutcome).toMatchObject({ kind: 'decided-elsewhere', decision: { reviewer_name: 'bo' } });
  });

  it('decides at once for the reviewer: the review leaves, the next is selected; the decision is sent after the undo window', async () => {
    const queue = useQueueStore();
    const first = await create({ task_type: 'decide-test', urgency: 'high' });
    const second = await create({ task_type: 'decide-test', urgency: 'low' });
    await queue.setFilters({ status: 'pending', task_type: 'decide-test' });
    queue.select(first.id);

    const deciding = queue.decide(first.id, { decision_type: 'approve', reviewer_name: 'dana' });
    expect(queue.shown.map((r) => r.id)).toEqual([second.id]);
    expect(queue.shownTotal).toBe(1);
    expect(queue.selectedId).toBe(second.id);
    expect(queue.held.map((d) => d.review.id)).toEqual([first.id]);
    expect(await statusOf(first.id)).toBe('pending');
    windows.endAll();
    await deciding;

    expect(queue.outcomes[first.id].outcome).toMatchObject({ kind: 'decided', decision: { decision_type: 'approve', reviewer_name: 'dana' } });
    expect(queue.notice).toBe(`Approved review #${first.id} (decide-test)`);
    expect(await statusOf(first.id)).toBe('approved');
    expect(queue.held).toEqual([]);
  });

  it('undoes a held decision: nothing is sent, and the review is back in its place, selected', async () => {
    const queue = useQueueStore();
    const first = await create({ task_type: 'undo-test', urgency: 'high' });
    const second = await create({ task_type: 'undo-test', urgency: 'low' });
    await queue.setFilters({ status: 'pending', task_type: 'undo-test' });

    const undone = queue.decide(first.id, { decision_type: 'reject' });
    queue.undo();
    await undone;
    expect(queue.shown.map((r) => r.id)).toEqual([first.id, second.id]);
    expect(queue.selectedId).toBe(first.id);
    expect(queue.notice).toBe(`Undone: review #${first.id} (undo-test) is back in the queue`);

    // Every window still open ends here: had Undo left the first one open, it would be sent too.
    await decidedNow(queue, second.id, { decision_type: 'approve' });
    expect(await statusOf(second.id)).toBe('approved');
    expect(await statusOf(first.id)).toBe('pending');
  });

  it('sends nothing when another reviewer decides a held review, and shows their decision as the one that stands', async () => {
    const queue = useQueueStore();
    const review = await create({ task_type: 'held-race-test' });
    await queue.setFilters({ status: 'pending', task_type: 'held-race-test' });
    const held = queue.decide(review.id, { decision_type: 'approve' });
    const theirs = await fetch(`${server.url}/reviews/${review.id}/decide`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ decision_type: 'reject', reviewer_name: 'bo' }),
    });

    queue.applyEvent('review.decided', { ...review, status: 'rejected', decision: await theirs.json() });
    await held;

    expect(queue.held).toEqual([]);
    expect(queue.selectedOutcome).toMatchObject({ kind: 'lost-race', decision: { decision_type: 'reject', reviewer_name: 'bo' } });
  });

  it('sends every held decision at once when the page goes away', async () => {
    const queue = useQueueStore();
    const first = await create({ task_type: 'leaving-test' });
    const second = await create({ task_type: 'leaving-test' });
    await queue.setFilters({ status: 'pending', task_type: 'leaving-test' });
    void queue.decide(first.id, { decision_type: 'approve', reviewer_name: 'dana' });
    void queue.decide(second.id, { decision_type: 'reject', reviewer_name: 'dana' });

    queue.sendHeldNow();

    expect(queue.held).toEqual([]);
    await expect.poll(() => Promise.all([statusOf(first.id), statusOf(second.id)])).toEqual(['approved', 'rejected']);
  });

  it('shows a lost race as the decision that stands, not as an error', async () => {
    const queue = useQueueStore();
    const review = await create({ task_type: 'race-test' });
    await queue.setFilters({ status: 'pending', task_type: 'race-test' });
    await fetch(`${server.url}/reviews/${review.id}/decide`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ decision_type: 'reject', reviewer_name: 'bo', notes: 'too risky' }),
    });

    await decidedNow(queue, review.id, { decision_type: 'approve' });

    expect(queue.error).toBeNull();
    expect(queue.selectedId).toBe(review.id);
    expect(queue.selectedOutcome).toMatchObject({ kind: 'lost-race', decision: { decision_type: 'reject', reviewer_name: 'bo', notes: 'too risky' } });
  });

  it('puts the review back with a readable message when the server refuses the decision', async () => {
    const queue = useQueueStore();
    const review = await create({ task_type: 'refused-test' });
    await queue.setFilters({ status: 'pending', task_type: 'refused-test' });

    await expect(decidedNow(queue, review.id, { decision_type: 'modify', modified_action: '   ' })).rejects.toThrow();

    expect(queue.shown.map((r) => r.id)).toEqual([review.id]);
    expect(queue.shownTotal).toBe(1);
    expect(queue.error).toBe('modified_action is required (non-empty) when decision_type is modify');
  });

  it('keeps the selected review across a filter change that still lists it', async () => {
    const queue = useQueueStore();
    await create({ task_type: 'keep-test', urgency: 'critical', proposed_action: 'first' });
    const looked = await create({ task_type: 'keep-test', urgency: 'low', proposed_action: 'looked at' });
    await queue.setFilters({ status: 'pending', task_type: 'keep-test' });
    queue.select(looked.id);

    await queue.setFilters({ status: 'pending', task_type: 'keep-test', q: 't' });
    expect(queue.shown.map((r) => r.id)).toHaveLength(2);
    expect(queue.selectedId).toBe(looked.id);
    await queue.setFilters({ status: 'pending', task_type: 'keep-test', urgency: 'critical' });
    expect(queue.selectedId).toBe(queue.shown[0].id);
  });

  it('follows agents starting and stopping to wait as a reload would: in the soonest-give-up order, and in and out of the waiting filter', async () => {
    const idle = await create({ task_type: 'waiting-test', urgency: 'critical' });
    const soon = await create({ task_type: 'waiting-test', urgency: 'low' });
    const later = await create({ task_type: 'waiting-test', urgency: 'low' });
    const reread = async (id: number): Promise<ReviewRecord> => (await (await fetch(`${server.url}/reviews/${id}`)).json()) as ReviewRecord;
    const polls = new AbortController();
    const poll = (id: number, seconds: number) => fetch(`${server.url}/reviews/${id}/decision?wait=${seconds}`, { signal: polls.signal }).catch(() => undefined);
    const queue = useQueueStore();
    try {
      await queue.setFilters({ status: 'pending', task_type: 'waiting-test' });
      await queue.setSort('waiting_until');
      expect(queue.reviews.map((r) => r.id)).toEqual([idle.id, soon.id, later.id]);

      const held = [poll(later.id, 200), poll(soon.id, 100)];
      await expect.poll(async () => (await reread(soon.id)).waiting_until !== null && (await reread(later.id)).waiting_until !== null).toBe(true);
      queue.applyEvent('review.waiting', await reread(later.id));
      queue.applyEvent('review.waiting', await reread(soon.id));
      expect(queue.reviews.map((r) => r.id)).toEqual([soon.id, later.id, idle.id]);
      const live = queue.reviews.map((r) => [r.id, r.waiting_until]);
      await queue.load();
      expect(queue.reviews.map((r) => [r.id, r.waiting_until])).toEqual(live);

      polls.abort();
      await Promise.all(held);
      await expect.poll(async () => (await reread(soon.id)).waiting_until === null && (await reread(later.id)).waiting_until === null).toBe(true);
      queue.applyEvent('review.waiting', await reread(soon.id));
      queue.applyEvent('review.waiting', await reread(later.id));
      expect(queue.reviews.map((r) => r.id)).toEqual([idle.id, soon.id, later.id]);

      // Filtered on waiting: a review joins the list when an agent starts waiting, and leaves when it stops.
      await queue.setFilters({ status: 'pending', task_type: 'waiting-test', waiting: true });
      expect(queue.total).toBe(0);
      const again = new AbortController();
      const polled = fetch(`${server.url}/reviews/${later.id}/decision?wait=60`, { signal: again.signal }).catch(() => undefined);
      await expect.poll(async () => (await reread(later.id)).waiting_until).not.toBeNull();
      queue.applyEvent('review.waiting', await reread(later.id));
      expect([queue.reviews.map((r) => r.id), queue.total]).toEqual([[later.id], 1]);
      again.abort();
      await polled;
      await expect.poll(async () => (await reread(later.id)).waiting_until).toBeNull();
      queue.applyEvent('review.waiting', await reread(later.id));
      expect([queue.reviews.map((r) => r.id), queue.total]).toEqual([[], 0]);
    } finally {
      polls.abort();
    }
  });

  it('moves the selection with j and k bounds', async () => {
    const queue = useQueueStore();
    const ids = [];
    for (let i = 0; i < 3; i++) ids.push((await create({ task_type: 'move-test' })).id);
    await queue.setFilters({ status: 'pending', task_type: 'move-test' });
    queue.move(-1);
    expect(queue.selectedId).toBe(ids[0]);
    queue.move(1);
    queue.move(1);
    queue.move(1);
    expect(queue.selectedId).toBe(ids[2]);
  });
});

describe('review list rules', () => {
  const review = (id: number, urgency: ReviewRecord['urgency'], extra: Partial<ReviewRecord> = {}) =>
    ({ id, urgency, status: 'pending', task_type: 't', proposed_action: 'Refund 100% now', framework: null, assigned_to: null, ...extra }) as ReviewRecord;

  it('matches filters as the API does, search included', () => {
    expect(matchesFilters(review(1, 'low'), { status: 'pending', q: '100%' })).toBe(true);
    expect(matchesFilters(review(1, 'low'), { q: 'refund 100' })).toBe(true);
    expect(matchesFilters(review(1, 'low'), { urgency: 'high' })).toBe(false);
    const me = { email: 'fay@acme.example', teams: ['finance'] };
    expect(matchesFilters(review(1, 'low', { assigned_to: 'fay@acme.example', assigned_team: null }), { mine: true }, me)).toBe(true);
    expect(matchesFilters(review(1, 'low', { assigned_to: null, assigned_team: 'finance' }), { mine: true }, me)).toBe(true);
    expect(matchesFilters(review(1, 'low', { assigned_to: 'sam@acme.example', assigned_team: 'legal' }), { mine: true }, me)).toBe(false);
    expect(matchesFilters(review(1, 'low', { assigned_to: 'fay@acme.example', assigned_team: null }), { mine: true })).toBe(false);
    expect(matchesFilters(review(1, 'low', { status: 'approved' }), { decided: true })).toBe(true);
    expect(matchesFilters(review(1, 'low'), { decided: true })).toBe(false);
  });

  it('leaves a review that sorts after the loaded page to the pages not yet loaded', () => {
    const list = [review(1, 'critical'), review(2, 'high')];
    expect(placeInOrder(list, review(3, 'low'), 'priority', true)).toBe(false);
    expect(placeInOrder(list, review(4, 'critical'), 'priority', true)).toBe(true);
    expect(placeInOrder(list, review(5, 'low'), 'priority', false)).toBe(true);
    expect(list.map((r) => r.id)).toEqual([1, 4, 2, 5]);
  });
});
