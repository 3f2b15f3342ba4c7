import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Principal, Scope } from '../../server/domain/shared/principal';
import { eventually, sampleReview, startTestServer, type TestServer } from '../support/server';

/**
 * Two organizations in one database, seen through the use cases every entry point calls (HTTP
 * routes, MCP tools, the CLI), with the caller's scope that authentication gives them. (Reaching
 * them over HTTP as an organization needs organization API keys: the hosted edition's.)
 */
let server: TestServer;
const acme: Principal = { kind: 'api_key', scope: { organizationId: 1 }, id: 'acme-key' };
const globex: Principal = { kind: 'api_key', scope: { organizationId: 2 }, id: 'globex-key' };

let acmeReview: number;
let globexReview: number;

beforeAll(async () => {
  server = await startTestServer();
  const { reviews } = server.test;
  const stored = async (principal: Principal, action: string) => {
    const outcome = await reviews.submitting.submit(principal, { ...sampleReview, proposed_action: action });
    if (outcome.kind !== 'stored') throw new Error(outcome.kind);
    return outcome.review;
  };
  acmeReview = (await stored(acme, 'Refund an Acme customer')).id;
  globexReview = (await stored(globex, 'Refund a Globex customer')).id;
});
afterAll(() => server.dispose());

/** An error with the status an HTTP route would answer. */
async function statusOf(work: Promise<unknown>): Promise<number> {
  try {
    await work;
    return 200;
  } catch (error) {
    return (error as { status?: number }).status ?? 500;
  }
}

describe('two organizations in one database', () => {
  it('each sees only its own reviews, and the other one’s id is a 404', async () => {
    const { reviews } = server.test;
    expect((await reviews.reading.list(acme.scope, {}, 1, 100)).reviews.map((r) => r.id)).toEqual([acmeReview]);
    expect((await reviews.reading.get(globex.scope, globexReview)).organization_id).toBe(2);
    expect(await statusOf(reviews.reading.get(acme.scope, globexReview))).toBe(404);
    expect(await statusOf(reviews.deciding.decide(acme.scope, globexReview, { decision_type: 'approve' }, acme))).toBe(404);
    expect(await statusOf(reviews.waiting.wait(acme.scope, globexReview, 1_000))).toBe(404);
    expect((await reviews.reading.get(globex.scope, globexReview)).status).toBe('pending');
  });

  it('cannot file a review, feedback or an attachment under the other organization', async () => {
    const { reviews, feedback, attachments } = server.test;
    expect(await statusOf(reviews.submitting.submit(acme, { ...sampleReview, organization_id: 2 }))).toBe(404);
    expect(await statusOf(feedback.add(acme, globexReview, { rating: 1 }))).toBe(404);
    expect(await statusOf(feedback.list(acme.scope, globexReview))).toBe(404);
    expect(await statusOf(attachments.list(acme.scope, globexReview))).toBe(404);
    expect(await statusOf(attachments.checkCanAttach(acme, globexReview))).toBe(404);
    expect((await feedback.list(globex.scope, globexReview)).count).toBe(0);
  });

  it('counts only its own reviews in the statistics, and a filter for the other organization is a 404', async () => {
    const { statistics } = server.test;
    expect((await statistics.statistics(acme.scope)).total_reviews).toBe(1);
    expect(await statusOf(statistics.statistics(acme.scope, 2))).toBe(404);
  });

  it('gets only its own events on its event stream', async () => {
    const listening = http.createServer((req, res) => void server.test.attachStream(req, res, acme));
    await new Promise<void>((resolve) => listening.listen(0, '127.0.0.1', resolve));
    const received: string[] = [];
    const request = http.get(`http://127.0.0.1:${(listening.address() as AddressInfo).port}/`, (response) => {
      response.on('data', (chunk: Buffer) => received.push(chunk.toString()));
    });
    try {
      await eventually(() => received.join('').includes(': connected'), 5_000, 'the stream to open');
      await server.test.reviews.submitting.submit(globex, { ...sampleReview, proposed_action: 'Globex only' });
      const mine = await server.test.reviews.submitting.submit(acme, { ...sampleReview, proposed_action: 'Acme only' });
      await eventually(() => received.join('').includes('Acme only'), 5_000, "its own organization's event");
      expect(received.join('')).not.toContain('Globex only');
      expect(mine.kind).toBe('stored');
    } finally {
      request.destroy();
      await new Promise((resolve) => listening.close(resolve));
    }
  });

  it('sees only its own reviews through the MCP tools', async () => {
    const acmeTools = server.gatewayFor(acme);
    expect(await statusOf(acmeTools.get(globexReview))).toBe(404);
    expect(await statusOf(acmeTools.addFeedback(globexReview, { rating: 2 }))).toBe(404);
    const pending = await acmeTools.listPending({}, 1, 100);
    expect(pending.reviews.every((review) => review.organization_id === 1)).toBe(true);
    expect(pending.reviews.map((review) => review.id)).toContain(acmeReview);
  });

  it('leaves the self-hosted installation seeing every organization’s reviews, as before', async () => {
    const installation: Scope = { organizationId: null };
    const ids = (await server.test.reviews.reading.list(installation, {}, 1, 100)).reviews.map((r) => r.id);
    expect(ids).toEqual(expect.arrayContaining([acmeReview, globexReview]));
  });
});
