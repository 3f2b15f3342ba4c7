import type { Browser } from 'playwright';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium } from '../support/browser';
import { startTestDashboard } from '../support/dashboard';
import { startTestServer, type TestServer } from '../support/server';

let server: TestServer;
let browser: Browser;

beforeAll(async () => {
  server = await startTestServer();
  browser = await launchChromium();
});
afterAll(async () => {
  await browser?.close();
  await server?.dispose();
});

/** Opens a page, recording every request it makes and every console error. */
async function visit(path: string) {
  const page = await browser.newPage();
  const requests: string[] = [];
  const errors: string[] = [];
  page.on('request', (request) => requests.push(request.url()));
  page.on('response', (response) => { if (response.status() >= 400) errors.push(`${response.status()} ${response.url()}`); });
  page.on('console', (message) => {
    if (message.type() === 'error') errors.push(message.text());
  });
  page.on('pageerror', (error) => errors.push(error.message));
  await page.goto(`${server.url}${path}`);
  return { page, requests, errors };
}

function leavingTheMachine(requests: string[], origin: string): string[] {
  return requests.filter((url) => !url.startsWith(origin) && !url.startsWith('data:') && !url.startsWith('blob:'));
}

describe('API documentation pages', () => {
  it('renders Swagger UI at /docs from local assets only', async () => {
    const { page, requests, errors } = await visit('/docs');
    await expect.poll(() => page.locator('.swagger-ui .info .title').textContent(), { timeout: 15_000 }).toContain('Greenlight API');
    await expect.poll(() => page.locator('.opblock-summary-path').count()).toBeGreaterThanOrEqual(10);
    expect(await page.locator('.opblock-summary-path', { hasText: '/reviews/{review_id}/decide' }).count()).toBe(1);
    expect(leavingTheMachine(requests, server.url)).toEqual([]);
    expect(errors).toEqual([]);
    await page.close();
  });

  it('renders ReDoc at /redoc from local assets only', async () => {
    const { page, requests, errors } = await visit('/redoc');
    await expect.poll(() => page.locator('h1').first().textContent(), { timeout: 15_000 }).toContain('Greenlight API');
    await expect.poll(() => page.getByText('Approve, reject or modify a pending review').count()).toBeGreaterThan(0);
    expect(leavingTheMachine(requests, server.url)).toEqual([]);
    expect(errors).toEqual([]);
    await page.close();
  });

  it("sends Swagger UI's requests, on the page the dashboard serves at /api/docs, through /api to the API", async () => {
    const dashboard = await startTestDashboard(server);
    const page = await browser.newPage();
    try {
      await page.goto(`${dashboard.url}/api/docs`);
      await page.locator('.opblock-summary-path', { hasText: /^\/health$/ }).click();
      await page.getByRole('button', { name: 'Try it out' }).click();
      const [request] = await Promise.all([page.waitForRequest((r) => r.url().endsWith('/health')), page.getByRole('button', { name: 'Execute' }).click()]);
      expect(request.url()).toBe(`${dashboard.url}/api/health`);
      expect((await request.response())?.status()).toBe(200);
    } finally {
      await page.close();
      await dashboard.dispose();
    }
  });
});
