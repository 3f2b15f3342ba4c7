import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, sampleReview, startTestServer, type TestServer } from '../support/server';

let server: TestServer;
const api = (method: string, path: string, body?: unknown) => call(server.url, method, path, body);

beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server.dispose());

describe('feedback', () => {
  it('stores a rating and a comment, and lists entries oldest first', async () => {
    const review = (await api('POST', '/reviews', sampleReview)).body;
    const first = await api('POST', `/reviews/${review.id}/feedback`, { rating: 4, comment: 'close call' });
    const second = await api('POST', `/reviews/${review.id}/feedback`, { comment: 'only a comment' });
    const third = await api('POST', `/reviews/${review.id}/feedback`, { rating: 1 });

    expect(first.status).toBe(201);
    expect(first.body).toEqual({ id: expect.any(Number), review_id: review.id, rating: 4, comment: 'close call', created_at: expect.any(String) });
    expect(second.body).toMatchObject({ rating: null, comment: 'only a comment' });
    expect(third.body).toMatchObject({ rating: 1, comment: null });

    const list = await api('GET', `/reviews/${review.id}/feedback`);
    expect(list.status).toBe(200);
    expect(list.body).toEqual({ review_id: review.id, feedback: [first.body, second.body, third.body], count: 3 });
  });

  it.each([
    ['rating', { rating: 0 }],
    ['rating', { rating: 6 }],
    ['rating', { rating: 4.5 }],
    ['rating', { rating: '5' }],
    ['rating', {}],
    ['rating', { rating: null, comment: null }],
    ['comment', { comment: 'x'.repeat(10_001) }],
    ['stars', { stars: 5 }],
    ['comment', { comment: 'fine\u0000 work' }],
  ])('refuses bad feedback naming %s (case %#)', async (field, body) => {
    const review = (await api('POST', '/reviews', sampleReview)).body;
    const response = await api('POST', `/reviews/${review.id}/feedback`, body);
    expect(response.status).toBe(400);
    expect(response.body.errors[0].field).toBe(field);
    expect((await api('GET', `/reviews/${review.id}/feedback`)).body.count).toBe(0);
  });

  it('answers 404 for a review that does not exist', async () => {
    expect((await api('POST', '/reviews/987654/feedback', { rating: 3 })).status).toBe(404);
    expect((await api('GET', '/reviews/987654/feedback')).status).toBe(404);
  });
});

describe('GET /stats', () => {
  it('reports zeros, nulls and all four urgencies on an empty database', async () => {
    const empty = await startTestServer();
    try {
      const stats = await call(empty.url, 'GET', '/stats');
      expect(stats.status).toBe(200);
      expect(stats.body).toEqual({
        total_reviews: 0,
        pending_reviews: 0,
        approved_reviews: 0,
        rejected_reviews: 0,
        modified_reviews: 0,
        avg_confidence_score: null,
        avg_seconds_to_decision: null,
        task_type_breakdown: {},
        framework_breakdown: {},
        urgency_breakdown: { low: 0, medium: 0, high: 0, critical: 0 },
        decisions_over_time: expect.any(Array),
      });
      expect(stats.body.decisions_over_time).toHaveLength(14);
      expect(stats.body.decisions_over_time.every((d: any) => d.approved + d.rejected + d.modified === 0)).toBe(true);
    } finally {
      await empty.dispose();
    }
  });

  it('is exact on a mixed set of reviews, with one SQL aggregate per figure group', async () => {
    let clock = Date.parse('2026-11-22T10:00:00.000Z');
    const own = await startTestServer({}, { clock: () => clock });
    try {
      const create = async (body: object) => (await call(own.url, 'POST', '/reviews', { ...sampleReview, ...body })).body.id as number;
      const a = await create({ task_type: 'refund', confidence_score: 0.9, urgency: 'high', framework: 'langchain', organization_id: 1 });
      const b = await create({ task_type: 'refund', confidence_score: 0.5, urgency: 'low', organization_id: 1 });
      const c = await create({ task_type: 'email', urgency: 'critical', framework: 'crewai', organization_id: 2 });
      await create({ task_type: 'email', confidence_score: 0.1, framework: 'langchain' });

      clock += 10_000;
      await call(own.url, 'POST', `/reviews/${a}/decide`, { decision_type: 'approve' });
      clock += 20_000;
      await call(own.url, 'POST', `/reviews/${b}/decide`, { decision_type: 'reject' });
      clock += 30_000;
      await call(own.url, 'POST', `/reviews/${c}/decide`, { decision_type: 'modify', modified_action: 'other' });

      let queries = 0;
      own.test.sequelize.addHook('beforeQuery', 'count', () => {
        queries += 1;
      });
      const all = await call(own.url, 'GET', '/stats');
      own.test.sequelize.removeHook('beforeQuery', 'count');

      expect(queries).toBe(5);
      expect(all.body).toEqual({
        total_reviews: 4,
        pending_reviews: 1,
        approved_reviews: 1,
        rejected_reviews: 1,
        modified_reviews: 1,
        avg_confidence_score: expect.closeTo(0.5, 10),
        // Decided after 10 s, 30 s and 60 s.
        avg_seconds_to_decision: expect.closeTo(100 / 3, 6),
        task_type_breakdown: { refund: 2, email: 2 },
        framework_breakdown: { langchain: 2, crewai: 1 },
        urgency_breakdown: { low: 1, medium: 1, high: 1, critical: 1 },
        decisions_over_time: expect.any(Array),
      });
      const days = all.body.decisions_over_time;
      expect(days).toHaveLength(14);
      expect(days[13]).toEqual({ date: '2026-11-22', approved: 1, rejected: 1, modified: 1 });
      expect(days[0].date).toBe('2026-11-09');
      expect(days.slice(0, 13).every((d: any) => d.approved + d.rejected + d.modified === 0)).toBe(true);

      const organizationOne = await call(own.url, 'GET', '/stats?organization_id=1');
      expect(organizationOne.body).toMatchObject({
        total_reviews: 2,
        approved_reviews: 1,
        rejected_reviews: 1,
        avg_confidence_score: expect.closeTo(0.7, 10),
        avg_seconds_to_decision: expect.closeTo(20, 6),
        task_type_breakdown: { refund: 2 },
        framework_breakdown: { langchain: 1 },
      });
    } finally {
      await own.dispose();
    }
  });

  it('refuses an organization_id that is not a positive integer', async () => {
    expect((await api('GET', '/stats?organization_id=abc')).status).toBe(400);
    expect((await api('GET', '/stats?organization_id=0')).status).toBe(400);
  });
});
