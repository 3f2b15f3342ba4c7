import { createPinia, setActivePinia } from 'pinia';
import { beforeEach, describe, expect, it } from 'vitest';
import { storesOnHeldAnswers } from '../../../test/support/held-answers';
import { call } from '../../../test/support/server';
import type { ReviewRecord } from '../api/types';
import { usePendingCountsStore } from './pending-counts';

const api = storesOnHeldAnswers();
beforeEach(() => setActivePinia(createPinia()));

async function create(urgency: ReviewRecord['urgency']): Promise<ReviewRecord> {
  return (await call(api.server.url, 'POST', '/reviews', { task_type: 'count-test', proposed_action: 'do it', urgency })).body;
}

async function pendingOnServer(urgency: ReviewRecord['urgency']): Promise<number> {
  return (await call(api.server.url, 'GET', `/reviews?status=pending&urgency=${urgency}&page_size=1`)).body.total;
}

describe('usePendingCountsStore', () => {
  it('counts pending reviews per urgency, kept current by events', async () => {
    await create('critical');
    await create('low');
    const counts = usePendingCountsStore();
    await counts.refresh();
    expect(counts.byUrgency).toEqual({ critical: await pendingOnServer('critical'), high: 0, medium: 0, low: await pendingOnServer('low') });

    const high = await create('high');
    counts.applyEvent('review.created', high);
    expect(counts.byUrgency.high).toBe(1);
    const decided = (await call(api.server.url, 'POST', `/reviews/${high.id}/decide`, { decision_type: 'approve' })).body;
    counts.applyEvent('review.decided', { ...high, status: 'approved', decision: decided });
    expect(counts.byUrgency.high).toBe(0);
    expect(counts.total).toBe((await pendingOnServer('critical')) + (await pendingOnServer('low')));
  });

  it('counts a review created while a read was under way, though the read answered without it', async () => {
    const counts = usePendingCountsStore();
    const release = api.client.hold();
    const reading = counts.refresh();
    await expect.poll(() => api.client.answered).toBe(4);

    const review = await create('critical');
    counts.applyEvent('review.created', review);
    release();
    await reading;

    expect(counts.byUrgency.critical).toBe(await pendingOnServer('critical'));
  });

  it('does not count twice a review whose event arrives while a read that already counts it is under way', async () => {
    const counts = usePendingCountsStore();
    const review = await create('high');
    const release = api.client.hold();
    const reading = counts.refresh();
    await expect.poll(() => api.client.answered).toBe(4);

    counts.applyEvent('review.created', review);
    release();
    await reading;

    expect(counts.byUrgency.high).toBe(await pendingOnServer('high'));
  });

  it('ignores a review a routing rule decided on arrival: it was never pending', () => {
    const counts = usePendingCountsStore();
    const decision = { id: 1, review_id: 9, decision_type: 'approve', reviewer_id: null, reviewer_name: 'rule:auto', modified_action: null, notes: null, created_at: '' } as const;
    const review = { id: 9, urgency: 'critical', status: 'approved', routing_rule: 'auto', decision } as unknown as ReviewRecord;
    counts.applyEvent('review.created', review);
    counts.applyEvent('review.decided', review);
    expect(counts.byUrgency.critical).toBe(0);
  });
});
