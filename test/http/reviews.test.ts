import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, expectProblem, sampleReview, startTestServer, type TestServer } from '../support/server';

let server: TestServer;
const api = (method: string, path: string, body?: unknown, init?: RequestInit) => call(server.url, method, path, body, init);

beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server.dispose());

describe('POST /reviews', () => {
  it('creates a pending review and returns every field with defaults filled in', async () => {
    const response = await api('POST', '/reviews', sampleReview);
    expect(response.status).toBe(201);
    expect(response.headers.get('location')).toBe(`/reviews/${response.body.id}`);
    expect(response.body).toEqual({
      id: expect.any(Number),
      ...sampleReview,
      agent_reasoning: null,
      confidence_score: null,
      urgency: 'medium',
      framework: null,
      metadata: {},
      organization_id: null,
      agent_id: null,
      agent_name: null,
      status: 'pending',
      assigned_to: null,
      assigned_team: null,
      routing_rule: null,
      created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      updated_at: expect.any(String),
      decided_at: null,
      expires_at: null,
      waiting_until: null,
      decision: null,
      links: { dashboard: `http://127.0.0.1:8501/#/reviews/${response.body.id}` },
    });
  });

  it('stores every optional field as given', async () => {
    const full = {
      ...sampleReview,
      agent_reasoning: 'carrier confirmed the loss',
      confidence_score: 0.82,
      urgency: 'critical',
      framework: 'langchain',
      metadata: { order: { id: 1042, lines: [1, 2] }, note: 'ünïcødé ✓' },
      organization_id: 3,
      agent_id: 9,
      blocking: false,
    };
    const created = await api('POST', '/reviews', full);
    expect(created.status).toBe(201);
    const { blocking: _blocking, ...stored } = full;
    expect(created.body).toMatchObject(stored);
    expect((await api('GET', `/reviews/${created.body.id}`)).body).toMatchObject(stored);
  });

  it.each([
    ['task_type', { proposed_action: 'x' }, /task_type is required/],
    ['proposed_action', { task_type: 'x' }, /proposed_action is required/],
    ['task_type', { ...sampleReview, task_type: '' }, /must not be empty/],
    ['confidence_score', { ...sampleReview, confidence_score: 1.5 }, /must be <= 1/],
    ['confidence_score', { ...sampleReview, confidence_score: -0.1 }, /must be >= 0/],
    ['confidence_score', { ...sampleReview, confidence_score: '0.5' }, /must be of type number/],
    ['urgency', { ...sampleReview, urgency: 'asap' }, /must be one of: low, medium, high, critical/],
    ['metadata', { ...sampleReview, metadata: [1, 2] }, /must be of type object/],
    ['metadata', { ...sampleReview, metadata: 'text' }, /must be of type object/],
    ['agent_id', { ...sampleReview, agent_id: 1.5 }, /must be of type integer/],
    ['blocking', { ...sampleReview, blocking: 'yes' }, /must be of type boolean/],
    ['confidence', { ...sampleReview, confidence: 0.5 }, /confidence is not a known field/],
    ['task_type', { ...sampleReview, task_type: 'x'.repeat(256) }, /at most 255 characters/],
    ['proposed_action', { ...sampleReview, proposed_action: 'Refund\u0000 order 1042' }, /proposed_action must not contain the NUL character/],
  ])('refuses a body with a bad %s (case %#)', async (field, body, detail) => {
    const before = (await api('GET', '/reviews?page_size=1')).body.total;
    const response = await api('POST', '/reviews', body);
    expectProblem(response, 400, detail);
    expect(response.body.errors).toEqual([expect.objectContaining({ field })]);
    expect((await api('GET', '/reviews?page_size=1')).body.total).toBe(before);
  });

  it('answers malformed JSON with 400 and a readable reason', async () => {
    const response = await api('POST', '/reviews', undefined, {
      headers: { 'content-type': 'application/json' },
      body: '{"task_type": "refund",',
    });
    expectProblem(response, 400, /not valid JSON/);
  });

  it.each([
    ['null', 'null'],
    ['42', 'a number'],
    ['"refund"', 'a string'],
  ])('calls a JSON body of %s what it is, not invalid JSON', async (body, what) => {
    const response = await api('POST', '/reviews', undefined, { headers: { 'content-type': 'application/json' }, body });
    expectProblem(response, 400, new RegExp(`^the request body must be a JSON object, not ${what}$`));
  });

  it('answers a body that is not JSON with 415', async () => {
    const response = await api('POST', '/reviews', undefined, {
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'task_type=refund&proposed_action=x',
    });
    expectProblem(response, 415);
  });

  it('answers a JSON array body with 400', async () => {
    expectProblem(await api('POST', '/reviews', [sampleReview]), 400, /must be of type object/);
  });
});

describe('GET /reviews', () => {
  let ids: number[];

  beforeAll(async () => {
    ids = [];
    for (const [task_type, urgency, framework] of [
      ['list-a', 'low', 'crewai'],
      ['list-b', 'high', 'crewai'],
      ['list-a', 'high', 'autogen'],
    ]) {
      ids.push((await api('POST', '/reviews', { ...sampleReview, task_type, urgency, framework })).body.id);
    }
    await api('POST', `/reviews/${ids[0]}/decide`, { decision_type: 'reject' });
  });

  it('answers an envelope, newest first', async () => {
    const response = await api('GET', '/reviews?task_type=list-a');
    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({ total: 2, page: 1, page_size: 20 });
    expect(response.body.reviews.map((r: { id: number }) => r.id)).toEqual([ids[2], ids[0]]);
  });

  it('includes the decision of decided reviews', async () => {
    const response = await api('GET', '/reviews?task_type=list-a&status=rejected');
    expect(response.body.reviews).toHaveLength(1);
    expect(response.body.reviews[0].decision).toMatchObject({ decision_type: 'reject', review_id: ids[0] });
  });

  it.each([
    ['status=pending&task_type=list-a', 1],
    ['urgency=high&framework=crewai', 1],
    ['framework=crewai', 2],
    ['urgency=high', 2],
    ['status=rejected&task_type=list-b', 0],
  ])('filters by %s', async (query, expected) => {
    const response = await api('GET', `/reviews?${query}&page_size=100`);
    expect(response.status).toBe(200);
    const matching = response.body.reviews.filter((r: { id: number }) => ids.includes(r.id));
    expect(matching).toHaveLength(expected);
  });

  it('pages with page and page_size, keeping the total', async () => {
    const first = await api('GET', '/reviews?framework=crewai&page_size=1');
    const second = await api('GET', '/reviews?framework=crewai&page_size=1&page=2');
    const third = await api('GET', '/reviews?framework=crewai&page_size=1&page=3');
    expect(first.body).toMatchObject({ total: 2, page: 1, page_size: 1 });
    expect(first.body.reviews[0].id).toBe(ids[1]);
    expect(second.body.reviews[0].id).toBe(ids[0]);
    expect(third.body).toMatchObject({ total: 2, page: 3, reviews: [] });
  });

  it('orders by priority: most urgent first, then oldest first', async () => {
    const own = await startTestServer();
    try {
      const created: Record<string, number> = {};
      for (const [name, urgency] of [['low-1', 'low'], ['high-1', 'high'], ['critical-1', 'critical'], ['high-2', 'high'], ['medium-1', 'medium']]) {
        created[name] = (await call(own.url, 'POST', '/reviews', { ...sampleReview, urgency })).body.id;
      }
      const queue = await call(own.url, 'GET', '/reviews?status=pending&sort=priority');
      expect(queue.body.reviews.map((r: { id: number }) => r.id)).toEqual(
        ['critical-1', 'high-1', 'high-2', 'medium-1', 'low-1'].map((name) => created[name]),
      );
      const oldest = await call(own.url, 'GET', '/reviews?sort=oldest&page_size=2');
      expect(oldest.body.reviews.map((r: { id: number }) => r.id)).toEqual([created['low-1'], created['high-1']]);
    } finally {
      await own.dispose();
    }
  });

  it('lists decided reviews by decision time with decided=true&sort=recently_decided', async () => {
    const own = await startTestServer();
    try {
      const ids: number[] = [];
      for (let i = 0; i < 3; i++) ids.push((await call(own.url, 'POST', '/reviews', sampleReview)).body.id);
      await call(own.url, 'POST', `/reviews/${ids[2]}/decide`, { decision_type: 'approve' });
      await new Promise((resolve) => setTimeout(resolve, 5));
      await call(own.url, 'POST', `/reviews/${ids[0]}/decide`, { decision_type: 'reject' });
      const history = await call(own.url, 'GET', '/reviews?decided=true&sort=recently_decided');
      expect(history.body.reviews.map((r: { id: number }) => r.id)).toEqual([ids[0], ids[2]]);
      expect(history.body.total).toBe(2);
      const pending = await call(own.url, 'GET', '/reviews?decided=false');
      expect(pending.body.reviews.map((r: { id: number }) => r.id)).toEqual([ids[1]]);
    } finally {
      await own.dispose();
    }
  });

  it('searches the proposed action with q, treating % and _ literally', async () => {
    const own = await startTestServer();
    try {
      for (const action of ['Refund 100% of order 7', 'Refund half of order 8', 'Send email to Bob_Smith']) {
        await call(own.url, 'POST', '/reviews', { task_type: 'search', proposed_action: action });
      }
      const search = async (q: string) =>
        (await call(own.url, 'GET', `/reviews?q=${encodeURIComponent(q)}`)).body.reviews.map((r: { proposed_action: string }) => r.proposed_action);
      expect(await search('refund')).toEqual(['Refund half of order 8', 'Refund 100% of order 7']);
      expect(await search('100%')).toEqual(['Refund 100% of order 7']);
      expect(await search('%')).toEqual(['Refund 100% of order 7']);
      expect(await search('b_s')).toEqual(['Send email to Bob_Smith']);
      expect(await search('nothing like this')).toEqual([]);
      const plusForSpace = await call(own.url, 'GET', '/reviews?q=half+of');
      expect(plusForSpace.body.reviews.map((r: { proposed_action: string }) => r.proposed_action)).toEqual(['Refund half of order 8']);
    } finally {
      await own.dispose();
    }
  });

  it.each([
    ['sort=random', 'sort'],
    ['decided=maybe', 'decided'],
    ['q=', 'q'],
    ['page=0', 'page'],
    ['page_size=0', 'page_size'],
    ['page_size=101', 'page_size'],
    ['page=abc', 'page'],
    ['status=done', 'status'],
    ['urgency=asap', 'urgency'],
    ['agent_id=x', 'agent_id'],
    ['pagesize=10', 'pagesize'],
  ])('refuses %s with a 400 naming %s', async (query, field) => {
    const response = await api('GET', `/reviews?${query}`);
    expectProblem(response, 400);
    expect(response.body.errors[0].field).toBe(field);
  });
});

describe('GET /reviews/{review_id}', () => {
  it('answers 404 for a review that does not exist', async () => {
    expectProblem(await api('GET', '/reviews/987654'), 404, /review 987654 does not exist/);
  });

  it.each(['abc', '0', '-1', '1.5'])('answers 400 for the id %s', async (id) => {
    expectProblem(await api('GET', `/reviews/${id}`), 400);
  });
});

describe('POST /reviews/{review_id}/decide', () => {
  it.each([
    ['approve', {}, 'approved'],
    ['reject', { notes: 'too risky' }, 'rejected'],
    ['modify', { modified_action: 'Refund EUR 125.00' }, 'modified'],
  ] as const)('records %s and moves the review to %s', async (decision_type, extra, status) => {
    const review = (await api('POST', '/reviews', sampleReview)).body;
    const response = await api('POST', `/reviews/${review.id}/decide`, {
      decision_type,
      reviewer_name: 'dana@example.com',
      reviewer_id: 4,
      ...extra,
    });
    expect(response.status).toBe(200);
    expect(response.body).toEqual({
      id: expect.any(Number),
      review_id: review.id,
      decision_type,
      reviewer_id: 4,
      reviewer_name: 'dana@example.com',
      modified_action: 'modified_action' in extra ? extra.modified_action : null,
      notes: 'notes' in extra ? extra.notes : null,
      created_at: expect.any(String),
      receipt: expect.stringMatching(/^[\w-]+\.[\w-]+\.[\w-]+$/),
    });
    const stored = (await api('GET', `/reviews/${review.id}`)).body;
    expect(stored.status).toBe(status);
    expect(stored.decided_at).toBe(response.body.created_at);
    expect(stored.decision).toEqual(response.body);
  });

  it('refuses modify without a modified action', async () => {
    const review = (await api('POST', '/reviews', sampleReview)).body;
    for (const body of [{ decision_type: 'modify' }, { decision_type: 'modify', modified_action: '  ' }]) {
      const response = await api('POST', `/reviews/${review.id}/decide`, body);
      expectProblem(response, 400, /modified_action is required/);
    }
    expect((await api('GET', `/reviews/${review.id}`)).body.status).toBe('pending');
  });

  it('refuses a modified action with approve', async () => {
    const review = (await api('POST', '/reviews', sampleReview)).body;
    const response = await api('POST', `/reviews/${review.id}/decide`, { decision_type: 'approve', modified_action: 'other' });
    expectProblem(response, 400, /only used with decision_type modify/);
  });

  it.each([
    ['decision_type', {}],
    ['decision_type', { decision_type: 'maybe' }],
    ['reviewer', { decision_type: 'approve', reviewer: 'x' }],
    ['notes', { decision_type: 'approve', notes: 'x'.repeat(10_001) }],
  ])('refuses a decision with a bad %s (case %#)', async (field, body) => {
    const review = (await api('POST', '/reviews', sampleReview)).body;
    const response = await api('POST', `/reviews/${review.id}/decide`, body);
    expectProblem(response, 400);
    expect(response.body.errors[0].field).toBe(field);
  });

  it('refuses a second decision with 409 carrying the first, which stands', async () => {
    const review = (await api('POST', '/reviews', sampleReview)).body;
    const first = await api('POST', `/reviews/${review.id}/decide`, { decision_type: 'approve', reviewer_name: 'ana' });
    const second = await api('POST', `/reviews/${review.id}/decide`, { decision_type: 'reject', reviewer_name: 'bo' });
    expectProblem(second, 409, /already been decided/);
    expect(second.body).toMatchObject({ review_id: review.id, decision: first.body });
    expect((await api('GET', `/reviews/${review.id}`)).body).toMatchObject({ status: 'approved', decision: first.body });
  });

  it('answers 404 for a review that does not exist', async () => {
    expectProblem(await api('POST', '/reviews/987654/decide', { decision_type: 'approve' }), 404);
  });
});

describe('GET /reviews/{review_id}/decision', () => {
  it('answers null while pending and the decision once decided', async () => {
    const review = (await api('POST', '/reviews', sampleReview)).body;
    const pending = await api('GET', `/reviews/${review.id}/decision`);
    expect(pending.status).toBe(200);
    expect(pending.body).toBeNull();
    const decision = (await api('POST', `/reviews/${review.id}/decide`, { decision_type: 'reject', notes: 'no' })).body;
    expect((await api('GET', `/reviews/${review.id}/decision`)).body).toEqual(decision);
  });

  it('long-polls with ?wait=N and answers as soon as the decision is made', async () => {
    const review = (await api('POST', '/reviews', sampleReview)).body;
    const waiting = api('GET', `/reviews/${review.id}/decision?wait=30`);
    await expect.poll(() => server.test.waitingCount()).toBe(1);
    const decision = (await api('POST', `/reviews/${review.id}/decide`, { decision_type: 'approve' })).body;
    expect((await waiting).body).toEqual(decision);
    expect(server.test.waitingCount()).toBe(0);
  });

  it('answers null when the wait passes without a decision', async () => {
    const review = (await api('POST', '/reviews', sampleReview)).body;
    const response = await api('GET', `/reviews/${review.id}/decision?wait=1`);
    expect(response.status).toBe(200);
    expect(response.body).toBeNull();
  });

  it('refuses a wait longer than blocking_timeout_seconds', async () => {
    const review = (await api('POST', '/reviews', sampleReview)).body;
    const response = await api('GET', `/reviews/${review.id}/decision?wait=301`);
    expectProblem(response, 400, /at most 300/);
  });

  it('answers 404 for a review that does not exist, with or without wait', async () => {
    expectProblem(await api('GET', '/reviews/987654/decision'), 404);
    expectProblem(await api('GET', '/reviews/987654/decision?wait=5'), 404);
    expect(server.test.waitingCount()).toBe(0);
  });
});

describe('GET /health and unknown routes', () => {
  it('reports healthy with the database reachable and room on the disk', async () => {
    const response = await api('GET', '/health');
    expect(response.status).toBe(200);
    expect(response.body).toEqual({
      status: 'healthy',
      service: 'greenlight',
      version: expect.any(String),
      edition: 'self-hosted',
      database: 'ok',
      storage: 'ok',
      storage_free_bytes: expect.any(Number),
    });
  });

  it('answers an unknown path with a 404 problem', async () => {
    expectProblem(await api('GET', '/nothing-here'), 404);
  });

  it('answers a known path with the wrong method with 405', async () => {
    expectProblem(await api('DELETE', '/reviews'), 405);
  });
});
