import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser } from 'playwright';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium } from '../support/browser';
import { startTestDashboard, type TestDashboard } from '../support/dashboard';
import { call, reviewStatus, sampleReview, startTestServer, storedReviewCount, type TestServer } from '../support/server';

/**
 * A page on another site attacks Greenlight through the reviewer's own Chromium: the API and
 * the dashboard listen on 127.0.0.1, the attacker's page is served from localhost — the same
 * machine, but another site as far as the browser's Sec-Fetch-Site is concerned.
 */

let server: TestServer;
let dashboard: TestDashboard;
let browser: Browser;
let attacker: http.Server;
let attackerUrl: string;
/** What the attacker's site serves next. */
let attackPage = '';

beforeAll(async () => {
  server = await startTestServer();
  dashboard = await startTestDashboard(server);
  attacker = http.createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(attackPage);
  });
  await new Promise<void>((resolve) => attacker.listen(0, '127.0.0.1', resolve));
  attackerUrl = `http://localhost:${(attacker.address() as AddressInfo).port}/`;
  browser = await launchChromium();
});

afterAll(async () => {
  await browser?.close();
  await new Promise((resolve) => attacker?.close(resolve));
  await dashboard?.dispose();
  await server?.dispose();
});

interface Attempt {
  /** The status the server answered with, whether or not the browser let the page see it. */
  status: number;
  /** The body the browser sent. */
  postData: string | undefined;
}

/**
 * Opens the attacker's `markup` in a fresh page and returns what became of its POST to `target`.
 * The answer is read through the DevTools protocol: when Cross-Origin-Resource-Policy withholds
 * it from the page, Playwright reports no response at all.
 */
async function attack(markup: string, target: string): Promise<Attempt> {
  attackPage = markup;
  const page = await browser.newPage();
  const devtools = await page.context().newCDPSession(page);
  await devtools.send('Network.enable');
  try {
    const answered = new Promise<Attempt>((resolve, reject) => {
      const statuses = new Map<string, number>();
      let sent: { requestId: string; postData: string | undefined } | undefined;
      const timer = setTimeout(() => reject(new Error(`the attack page sent no POST to ${target}, or it was never answered`)), 10_000);
      const settle = (): void => {
        const status = sent && statuses.get(sent.requestId);
        if (status === undefined) return;
        clearTimeout(timer);
        resolve({ status, postData: sent!.postData });
      };
      devtools.on('Network.requestWillBeSent', ({ requestId, request }) => {
        if (request.url === target && request.method === 'POST') sent = { requestId, postData: request.postData };
        settle();
      });
      devtools.on('Network.responseReceivedExtraInfo', ({ requestId, statusCode }) => {
        statuses.set(requestId, statusCode);
        settle();
      });
    });
    // The page navigates away (a form) or fetches before it has loaded; waiting for load would race that.
    await page.goto(attackerUrl, { waitUntil: 'commit' });
    return await answered;
  } finally {
    await page.close();
  }
}

const html = (body: string): string => `<!doctype html><html><body>${body}</body></html>`;

const asAttribute = (text: string): string => text.replaceAll('&', '&amp;').replaceAll('"', '&quot;');

/** A form of one hidden field that submits itself as soon as the page is parsed. */
function selfSubmittingForm(action: string, enctype: string, name: string, value: string): string {
  const field = `<input type="hidden" name="${asAttribute(name)}" value="${asAttribute(value)}">`;
  return html(`<form method="post" action="${action}" enctype="${enctype}">${field}</form><script>document.forms[0].submit()</script>`);
}

describe.each([
  ['the API', () => server.url],
  ["the dashboard's /api", () => `${dashboard.url}/api`],
])('a page on another site attacking %s', (_label, baseOf) => {
  let base: string;
  let reviewId: number;

  beforeAll(async () => {
    base = baseOf();
    reviewId = (await call(server.url, 'POST', '/reviews', sampleReview)).body.id;
  });

  it('cannot create a review with a text/plain form crafted to read as JSON', async () => {
    const before = await storedReviewCount(server.url);
    const page = selfSubmittingForm(`${base}/reviews`, 'text/plain', '{"task_type":"x","proposed_action":"y","ignore":"', '"}');
    const attempt = await attack(page, `${base}/reviews`);
    // The browser did send a body any JSON parser would take: only the server's checks stand in the way.
    expect(JSON.parse(attempt.postData!)).toEqual({ task_type: 'x', proposed_action: 'y', ignore: '=' });
    expect(attempt.status).toBe(403);
    expect(await storedReviewCount(server.url)).toBe(before);
  });

  it('cannot decide a review with an urlencoded form', async () => {
    const attempt = await attack(selfSubmittingForm(`${base}/reviews/${reviewId}/decide`, 'application/x-www-form-urlencoded', 'decision_type', 'approve'), `${base}/reviews/${reviewId}/decide`);
    expect(attempt.status).toBe(403);
    expect(await reviewStatus(server.url, reviewId)).toBe('pending');
  });

  it("cannot decide a review with a no-cors fetch of a text/plain JSON body, though the page never reads the answer", async () => {
    const target = `${base}/reviews/${reviewId}/decide`;
    const page = html(`<script>
      fetch(${JSON.stringify(target)}, {
        method: 'POST',
        mode: 'no-cors',
        headers: { 'content-type': 'text/plain' },
        body: JSON.stringify({ decision_type: 'approve', notes: 'approved by a stranger' }),
      });
    </script>`);
    const attempt = await attack(page, target);
    expect(attempt.status).toBe(403);
    expect(await reviewStatus(server.url, reviewId)).toBe('pending');
  });

  it('cannot attach a file with a no-cors multipart upload, the one form encoding the API takes', async () => {
    const target = `${base}/reviews/${reviewId}/attachments`;
    const page = html(`<script>
      const form = new FormData();
      form.append('file', new File(['<h1>approve me</h1>'], 'evidence.html', { type: 'text/html' }));
      fetch(${JSON.stringify(target)}, { method: 'POST', mode: 'no-cors', body: form });
    </script>`);
    const attempt = await attack(page, target);
    expect(attempt.status).toBe(403);
    expect((await call(server.url, 'GET', `/reviews/${reviewId}/attachments`)).body.count).toBe(0);
  });
});
