import http from 'node:http';
import { describe, expect, it } from 'vitest';
import { startServer } from '../../server/app/api-server';
import { jsonRequest, send } from '../support/raw-http';
import { call, expectProblem, sampleReview, startTestServer } from '../support/server';

const LANES = 8;

interface Outcome {
  marker: string;
  /** 0: the connection ended without an answer. */
  status: number;
  connection: string | undefined;
  afterCloseBegan: boolean;
}

/** Every proposed action stored, read back page by page. */
async function storedActions(baseUrl: string): Promise<Set<string>> {
  const actions = new Set<string>();
  for (let page = 1; ; page++) {
    const { body } = await call(baseUrl, 'GET', `/reviews?page=${page}&page_size=100&sort=oldest`);
    for (const review of body.reviews) actions.add(review.proposed_action);
    if (body.reviews.length < 100) return actions;
  }
}

describe('shutting down under a stream of creates on kept-alive connections', () => {
  it('takes no request once it begins, answers every one it took, and stores nothing it did not acknowledge', async () => {
    const server = await startTestServer();
    const agent = new http.Agent({ keepAlive: true, maxSockets: LANES });
    const outcomes: Outcome[] = [];
    let closeBegan = false;
    let closed = false;
    let acknowledged = 0;
    let startClose: () => void = () => {};
    const enoughAcknowledged = new Promise<void>((resolve) => (startClose = resolve));

    const lane = async (lane: number): Promise<void> => {
      for (let i = 0; !closed; i++) {
        const marker = `drain lane ${lane} request ${i}`;
        const afterCloseBegan = closeBegan;
        try {
          const answer = await send(server.url, jsonRequest('POST', '/reviews', { ...sampleReview, proposed_action: marker }), { agent });
          outcomes.push({ marker, status: answer.status, connection: answer.headers.connection, afterCloseBegan });
          if (answer.status === 201 && ++acknowledged === 150) startClose();
          if (answer.status === 503) expectProblem(answer, 503, /shutting down/);
        } catch {
          outcomes.push({ marker, status: 0, connection: undefined, afterCloseBegan });
          if (closeBegan) return;
        }
      }
    };
    const lanes = Promise.all(Array.from({ length: LANES }, (_, n) => lane(n)));
    await enoughAcknowledged;
    closeBegan = true;
    await server.close();
    closed = true;
    await lanes;
    agent.destroy();

    const reopened = await startServer(server.config);
    try {
      const stored = await storedActions(reopened.url);
      const acknowledgedOutcomes = outcomes.filter((o) => o.status === 201);
      expect(acknowledgedOutcomes.filter((o) => !stored.has(o.marker))).toEqual([]);
      // A refusal or a cut connection means the request was not processed: a retry makes no duplicate.
      expect(outcomes.filter((o) => o.status !== 201 && stored.has(o.marker))).toEqual([]);
      expect(stored.size).toBe(acknowledgedOutcomes.length);
      // Only requests already under way when the shutdown began are still acknowledged: one per connection at most.
      expect(acknowledgedOutcomes.filter((o) => o.afterCloseBegan).length).toBeLessThanOrEqual(LANES);
      expect(outcomes.filter((o) => o.status === 503 && o.connection !== 'close')).toEqual([]);
    } finally {
      await reopened.close();
      await server.dispose();
    }
  });
});
