import path from 'node:path';
import type { Browser } from 'playwright';
import { build, type Rollup } from 'vite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium } from '../support/browser.js';
import { decide, pendingReviewOf } from '../support/client.mjs';
import { startTestDashboard, type TestDashboard } from '../support/dashboard.js';
import { startTestServer, type TestServer } from '../support/server.js';

// The TypeScript client bundled as a web page would bundle it, running in Chromium on the
// dashboard's origin (its /api), under the dashboard's own Content-Security-Policy.

const CLIENT_ENTRY = path.resolve(__dirname, '..', '..', 'clients', 'typescript', 'dist', 'index.js');

let server: TestServer;
let dashboard: TestDashboard;
let browser: Browser;
/** The bundle's files by name: the client, and the chunks it loads on demand. */
let bundle: Map<string, string>;

beforeAll(async () => {
  const output = (await build({
    configFile: false,
    logLevel: 'silent',
    build: { write: false, minify: false, lib: { entry: CLIENT_ENTRY, formats: ['es'], fileName: 'greenlight-client' } },
  })) as Rollup.RollupOutput[];
  bundle = new Map(output[0].output.flatMap((file) => (file.type === 'chunk' ? [[`/${file.fileName}`, file.code] as const] : [])));
  server = await startTestServer();
  dashboard = await startTestDashboard(server);
  browser = await launchChromium();
});
afterAll(async () => {
  await browser?.close();
  await dashboard?.dispose();
  await server?.dispose();
});

describe('the TypeScript client in a browser', () => {
  it('files, uploads, streams events and waits for a decision through the dashboard\'s /api', async () => {
    const page = await browser.newPage();
    const errors: string[] = [];
    page.on('pageerror', (error) => errors.push(error.message));
    const served = new Map([...bundle, ['/load-client.js', "import * as greenlight from './greenlight-client.mjs'; window.greenlight = greenlight;"]]);
    await page.route(
      (url) => url.origin === new URL(dashboard.url).origin && served.has(url.pathname),
      (route) => route.fulfill({ contentType: 'text/javascript', body: served.get(new URL(route.request().url()).pathname) }),
    );
    await page.goto(dashboard.url);
    await page.addScriptTag({ url: '/load-client.js', type: 'module' });
    await page.waitForFunction(() => 'greenlight' in window);

    type Page = { greenlight: typeof import('@greenlight/client'); firstEvent: Promise<IteratorResult<unknown>>; events: AsyncGenerator<unknown> };
    await page.evaluate(() => {
      const globals = window as unknown as Page;
      globals.events = new globals.greenlight.GreenlightClient({ baseUrl: `${location.origin}/api` }).events();
      globals.firstEvent = globals.events.next();
    });
    await expect.poll(() => server.test.openStreams()).toBe(1);

    const filed = await page.evaluate(async () => {
      const { greenlight, events, firstEvent } = window as unknown as Page;
      const client = new greenlight.GreenlightClient({ baseUrl: `${location.origin}/api` });
      const review = await client.createReview({ task_type: 'browser', proposed_action: 'Publish the post' });
      const event = (await firstEvent).value;
      await events.return(undefined);
      const attachment = await client.uploadAttachment(review.id, new File(['draft text'], 'draft.txt', { type: 'text/plain' }));
      const waiting = client.requestReview({ task_type: 'browser-wait', proposed_action: 'Send the newsletter' });
      (window as unknown as { waiting: Promise<unknown> }).waiting = waiting;
      return { review, event, attachment };
    });
    expect(filed.review).toMatchObject({ task_type: 'browser', status: 'pending' });
    expect(filed.event).toMatchObject({ type: 'review.created', data: { id: filed.review.id } });
    expect(filed.attachment).toMatchObject({ file_name: 'draft.txt', size_bytes: 10 });

    const reviewId = await pendingReviewOf(server.url, 'browser-wait');
    await decide(server.url, reviewId, { decision_type: 'approve', notes: 'ship it' });
    const decided = await page.evaluate(() => (window as unknown as { waiting: Promise<unknown> }).waiting);
    expect(decided).toMatchObject({ id: reviewId, status: 'approved', decision: { notes: 'ship it' } });
    // The receipt checked in the page, with the key set fetched through the dashboard's /api (WebCrypto's Ed25519).
    const checked = await page.evaluate(async () => {
      const { greenlight } = window as unknown as Page;
      const review = (await (window as unknown as { waiting: Promise<any> }).waiting) as any;
      const client = new greenlight.GreenlightClient({ baseUrl: `${location.origin}/api` });
      const claims = await client.verifyReceipt(review, 'Send the newsletter');
      const refused = await client.verifyReceipt(review, 'Send the newsletter twice').then(
        () => 'accepted',
        (error: { reason?: string }) => error.reason,
      );
      return { decision_type: claims.decision_type, sub: claims.sub, refused };
    });
    expect(checked).toEqual({ decision_type: 'approve', sub: String(reviewId), refused: 'action_mismatch' });
    expect(errors).toEqual([]);
  });
});
