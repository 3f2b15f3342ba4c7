import { afterEach, describe, expect, it } from 'vitest';
import { apiGateway, ApiRequestError } from '../../server/mcp/api-gateway';
import { freePort } from '../support/cli';
import { call, eventually, sampleReview, startTestServer, type TestServer } from '../support/server';

let server: TestServer | undefined;
afterEach(async () => {
  await server?.dispose();
  server = undefined;
});

const KEY = 'gateway-test-key-0123456789';

describe('the MCP tools\' gateway over the REST API', () => {
  it('waits across several long-polls and returns the review the moment it is decided', async () => {
    server = await startTestServer({ enable_auth: true, api_key: KEY });
    const gateway = apiGateway({ apiUrl: server.url, apiKey: KEY, longPollSeconds: 1 });
    const review = await gateway.create(sampleReview);
    const waiting = gateway.waitForDecision(review.id, 10_000, new AbortController().signal);
    await new Promise((resolve) => setTimeout(resolve, 1_500)); // past the first long-poll
    await call(server.url, 'POST', `/reviews/${review.id}/decide`, { decision_type: 'approve' }, { headers: { authorization: `Bearer ${KEY}` } });
    const outcome = await waiting;
    expect(outcome).toMatchObject({ kind: 'decided', review: { id: review.id, status: 'approved' } });
  });

  it('gives up as still pending when the time runs out or the caller aborts, leaving no waiter behind', async () => {
    server = await startTestServer();
    const gateway = apiGateway({ apiUrl: server.url, longPollSeconds: 1 });
    const review = await gateway.create(sampleReview);
    expect(await gateway.waitForDecision(review.id, 1_200, new AbortController().signal)).toEqual({ kind: 'still_pending' });

    const controller = new AbortController();
    const waiting = gateway.waitForDecision(review.id, 60_000, controller.signal);
    await eventually(() => server!.test.waitingCount() === 1, 5_000, 'the long-poll to arrive');
    controller.abort();
    expect(await waiting).toEqual({ kind: 'still_pending' });
    await eventually(() => server!.test.waitingCount() === 0, 5_000, 'the waiter to be released');
  });

  it('reports the API as unavailable when it shuts down during the wait, or cannot be reached', async () => {
    server = await startTestServer();
    const gateway = apiGateway({ apiUrl: server.url, longPollSeconds: 30 });
    const review = await gateway.create(sampleReview);
    const waiting = gateway.waitForDecision(review.id, 60_000, new AbortController().signal);
    await eventually(() => server!.test.waitingCount() === 1, 5_000, 'the long-poll to arrive');
    await server.close();
    expect(await waiting).toMatchObject({ kind: 'unavailable', reason: expect.stringContaining('shutting down') });

    const nowhere = apiGateway({ apiUrl: `http://127.0.0.1:${await freePort()}`, longPollSeconds: 30 });
    expect(await nowhere.waitForDecision(1, 5_000, new AbortController().signal)).toMatchObject({
      kind: 'unavailable',
      reason: expect.stringContaining('cannot be reached (ECONNREFUSED)'),
    });
  });

  it('turns problem documents into errors that carry their detail', async () => {
    server = await startTestServer({ enable_auth: true, api_key: KEY });
    const withoutKey = apiGateway({ apiUrl: server.url, longPollSeconds: 30 });
    await expect(withoutKey.get(1)).rejects.toMatchObject({ status: 401, message: expect.stringContaining('requires an API key') });
    const gateway = apiGateway({ apiUrl: server.url, apiKey: KEY, longPollSeconds: 30 });
    await expect(gateway.get(424242)).rejects.toThrow(ApiRequestError);
    await expect(gateway.get(424242)).rejects.toThrow('review 424242 does not exist');
  });
});
