import { createPinia, setActivePinia } from 'pinia';
import { beforeEach, describe, expect, it } from 'vitest';
import { storesOnHeldAnswers } from '../../../test/support/held-answers';
import { call } from '../../../test/support/server';
import { useHistoryStore } from './history';

const api = storesOnHeldAnswers();
beforeEach(() => setActivePinia(createPinia()));

describe('useHistoryStore', () => {
  it('keeps a decision made while the first page was being read, though the page was read before it', async () => {
    const history = useHistoryStore();
    const release = api.client.hold();
    const loading = history.load();
    await expect.poll(() => api.client.answered).toBe(1);

    const review = (await call(api.server.url, 'POST', '/reviews', { task_type: 'history-test', proposed_action: 'do it' })).body;
    const decided = (await call(api.server.url, 'POST', `/reviews/${review.id}/decide`, { decision_type: 'reject', notes: 'no' })).body;
    history.applyEvent('review.decided', { ...review, status: 'rejected', decided_at: decided.created_at, decision: decided });
    release();
    await loading;

    expect(history.reviews.map((r) => r.id)).toContain(review.id);
    expect(history.total).toBe((await call(api.server.url, 'GET', '/reviews?decided=true&page_size=1')).body.total);
  });
});
