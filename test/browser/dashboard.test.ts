import fs from 'node:fs';
import path from 'node:path';
import type { Browser, Page } from 'playwright';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium } from '../support/browser';
import { type RunningCli, startWithDashboard, stopProgram } from '../support/cli';
import { attach, onePagePdf, seedSampleReviews } from '../support/seed';
import { gradientPng } from '../support/png';
import { makeTempDir } from '../support/temp';

/** Where the screenshots the README shows are written. */
const SCREENSHOTS = path.resolve(__dirname, '..', '..', 'docs', 'screenshots');

let temp: ReturnType<typeof makeTempDir>;
let server: RunningCli;
let api: string;
let dashboard: string;
let browser: Browser;

/** A Greenlight of its own, with its own data directory. */
async function separateGreenlight(env: NodeJS.ProcessEnv = {}): Promise<RunningCli> {
  const dir = path.join(temp.dir, `separate-${Date.now()}`);
  fs.mkdirSync(dir);
  return startWithDashboard(dir, env);
}

beforeAll(async () => {
  temp = makeTempDir('greenlight-dashboard-');
  fs.mkdirSync(SCREENSHOTS, { recursive: true });
  server = await startWithDashboard(temp.dir);
  api = server.url;
  dashboard = server.dashboardUrl!;
  browser = await launchChromium();
});

afterAll(async () => {
  await browser?.close();
  await stopProgram(server);
  temp?.remove();
});

async function openDashboard(options: { width?: number; height?: number; bypassCSP?: boolean } = {}): Promise<Page> {
  const context = await browser.newContext({
    viewport: { width: options.width ?? 1280, height: options.height ?? 800 },
    bypassCSP: options.bypassCSP ?? false,
  });
  const page = await context.newPage();
  page.on('pageerror', (error) => {
    throw error;
  });
  await page.goto(dashboard);
  await expect.poll(() => page.locator('.live').textContent()).toBe('Live');
  return page;
}

async function post(path: string, body: unknown): Promise<any> {
  const response = await fetch(`${api}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  return response.json();
}

/** An agent's blocking request: resolves with the answer once a reviewer decides. */
function agentWaitsFor(body: Record<string, unknown>): Promise<{ status: number; body: any }> {
  return fetch(`${api}/reviews`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ ...body, blocking: true }),
  }).then(async (response) => ({ status: response.status, body: await response.json() }));
}

async function idOf(taskType: string): Promise<number> {
  let id: number | undefined;
  await expect
    .poll(async () => {
      const list = (await (await fetch(`${api}/reviews?task_type=${taskType}`)).json()) as { reviews: Array<{ id: number }> };
      id = list.reviews[0]?.id;
      return id;
    })
    .toBeDefined();
  return id!;
}

describe('the reviewer dashboard', () => {
  it('shows an agent’s blocking request live and approves it; the agent receives the decision', async () => {
    const page = await openDashboard();
    await page.getByLabel('Reviewer').fill('dana@example.com');
    await page.getByLabel('Reviewer').press('Tab');

    const agent = agentWaitsFor({ task_type: 'ui-approve', proposed_action: 'Archive 312 stale tickets', urgency: 'high' });
    const id = await idOf('ui-approve');
    const row = page.locator(`#review-${id}`);
    await expect.poll(() => row.count()).toBe(1);

    await row.click();
    await page.locator(`#notes-${id}`).fill('Fine, they are all older than a year.');
    await page.getByRole('button', { name: /^Approve/ }).click();

    const answer = await agent;
    expect(answer.status).toBe(201);
    expect(answer.body.decision).toMatchObject({
      decision_type: 'approve',
      reviewer_name: 'dana@example.com',
      notes: 'Fine, they are all older than a year.',
    });
    await expect.poll(() => row.count()).toBe(0);
    await expect.poll(() => page.locator('.toast').textContent()).toBe(`Approved review #${id} (ui-approve)`);
    await page.context().close();
  });

  it('rejects with the keyboard: select, r, Enter', async () => {
    const page = await openDashboard();
    const agent = agentWaitsFor({ task_type: 'ui-reject', proposed_action: 'Delete the staging database', urgency: 'critical' });
    const id = await idOf('ui-reject');
    await expect.poll(() => page.locator(`#review-${id}`).count()).toBe(1);
    await page.locator(`#review-${id}`).click();

    await page.keyboard.press('r');
    await expect.poll(() => page.locator('.armed-hint').textContent()).toBe(`Press Enter to reject review #${id}, Esc to cancel.`);
    await page.keyboard.press('Enter');

    const answer = await agent;
    expect(answer.body).toMatchObject({ status: 'rejected', decision: { decision_type: 'reject' } });
    await page.context().close();
  });

  it('modifies: the editor opens with the proposed action, and the agent receives the edited text', async () => {
    const page = await openDashboard();
    const agent = agentWaitsFor({ task_type: 'ui-modify', proposed_action: 'Refund EUR 250.00 to card 4242', urgency: 'medium' });
    const id = await idOf('ui-modify');
    await expect.poll(() => page.locator(`#review-${id}`).count()).toBe(1);
    await page.locator(`#review-${id}`).click();

    await page.keyboard.press('m');
    const editor = page.getByLabel('The action the agent should carry out instead');
    await expect.poll(() => editor.inputValue()).toBe('Refund EUR 250.00 to card 4242');
    await expect.poll(() => page.getByRole('button', { name: 'Approve with changes' }).isDisabled()).toBe(true);
    await editor.fill('Refund EUR 125.00 to card 4242 now; the rest after the carrier pays');
    await page.screenshot({ path: path.join(SCREENSHOTS, 'modify-editor.png') });
    await page.getByRole('button', { name: 'Approve with changes' }).click();

    const answer = await agent;
    expect(answer.body).toMatchObject({
      status: 'modified',
      decision: { decision_type: 'modify', modified_action: 'Refund EUR 125.00 to card 4242 now; the rest after the carrier pays' },
    });
    await page.context().close();
  });

  it('filters the queue, searches, and moves with j and k; ? shows the shortcuts', async () => {
    await post('/reviews', { task_type: 'ui-filter', proposed_action: 'Rotate the signing key of service alpha', urgency: 'low', framework: 'filterwork' });
    await post('/reviews', { task_type: 'ui-filter', proposed_action: 'Rotate the signing key of service beta', urgency: 'high', framework: 'filterwork' });
    const page = await openDashboard();

    await page.getByLabel('Urgency').selectOption('low');
    await expect.poll(async () => [...new Set(await page.locator('.queue-item .urgency').allTextContents())]).toEqual(['low']);
    await page.getByLabel('Urgency').selectOption('');

    await page.getByLabel('Search in actions').fill('signing key');
    await expect.poll(() => page.locator('.queue-item .action').allTextContents()).toEqual([
      'Rotate the signing key of service beta',
      'Rotate the signing key of service alpha',
    ]);

    await page.locator('.queue-list').focus();
    await page.keyboard.press('j');
    await expect.poll(() => page.locator('.queue-item[aria-selected="true"] .action').textContent()).toBe('Rotate the signing key of service alpha');
    await page.keyboard.press('k');
    await expect.poll(() => page.locator('.queue-item[aria-selected="true"] .action').textContent()).toBe('Rotate the signing key of service beta');

    await page.keyboard.press('?');
    await expect.poll(() => page.getByRole('heading', { name: 'Keyboard shortcuts' }).isVisible()).toBe(true);
    await page.keyboard.press('Escape');
    await page.context().close();
  });

  it('previews attachments: image, text and PDF', async () => {
    const review = await post('/reviews', { task_type: 'ui-attachments', proposed_action: 'Pay invoice 1042', urgency: 'critical' });
    await attach(api, review.id, gradientPng(), 'receipt.png', 'image/png', 'The receipt');
    await attach(api, review.id, 'line one\nline two\n', 'notes.txt', 'text/plain');
    await attach(api, review.id, onePagePdf('Invoice 1042'), 'invoice.pdf', 'application/pdf');
    const page = await openDashboard();
    await page.locator(`#review-${review.id}`).click();

    const image = page.getByRole('img', { name: 'The receipt' });
    await expect.poll(() => image.evaluate((img: HTMLImageElement) => img.complete && img.naturalWidth)).toBe(120);
    await expect.poll(() => page.locator('.attachment[data-kind="text"] pre').textContent()).toBe('line one\nline two\n');
    await expect.poll(() => page.locator('.attachment[data-kind="pdf"] iframe').getAttribute('src')).toMatch(/^blob:/);
    await page.context().close();
  });

  it('shows a lost race as the decision that stands, with who made it', async () => {
    const review = await post('/reviews', { task_type: 'ui-race', proposed_action: 'Disable 2FA for user 77', urgency: 'high' });
    // Live events held back, as on a slow connection: the reviewer does not learn of the
    // other decision before clicking.
    const slow = await (await browser.newContext({ viewport: { width: 1280, height: 800 } })).newPage();
    await slow.route('**/api/events', (route) => route.abort());
    await slow.goto(dashboard);
    await expect.poll(() => slow.locator(`#review-${review.id}`).count()).toBe(1);
    await slow.locator(`#review-${review.id}`).click();
    await post(`/reviews/${review.id}/decide`, { decision_type: 'reject', reviewer_name: 'bo@example.com', notes: 'Not without a ticket.' });

    await slow.getByRole('button', { name: /^Approve/ }).click();

    const outcome = slow.locator('.outcome');
    await expect.poll(() => outcome.locator('h3').textContent()).toBe('Already decided: bo@example.com rejected it before your decision arrived.');
    expect(await outcome.textContent()).toContain('Not without a ticket.');
    expect(await slow.locator('.message[role="alert"]').count()).toBe(0);
    await slow.context().close();
  });

  it('tells the reviewer who is looking at a review that someone else decided it', async () => {
    const review = await post('/reviews', { task_type: 'ui-elsewhere', proposed_action: 'Raise the rate limit of tenant 9', urgency: 'critical' });
    const page = await openDashboard();
    await page.locator(`#review-${review.id}`).click();
    await post(`/reviews/${review.id}/decide`, { decision_type: 'approve', reviewer_name: 'sam@example.com' });
    await expect.poll(() => page.locator('.outcome h3').textContent()).toBe('Decided meanwhile: sam@example.com approved it.');
    await page.context().close();
  });

  it('shows the statistics of /stats', async () => {
    const page = await openDashboard();
    await page.getByRole('link', { name: 'Statistics' }).click();
    const stats = (await (await fetch(`${api}/stats`)).json()) as any;
    const figure = (label: string) => page.locator(`.figure[data-figure="${label}"] .value`).textContent();
    await expect.poll(() => figure('Total reviews')).toBe(String(stats.total_reviews));
    expect(await figure('Pending')).toBe(String(stats.pending_reviews));
    expect(await figure('Approved')).toBe(String(stats.approved_reviews));
    expect(await figure('Rejected')).toBe(String(stats.rejected_reviews));
    expect(await figure('Modified')).toBe(String(stats.modified_reviews));
    const urgencyCounts = await page.locator('section.card:has(#by-urgency) .bars .count').allTextContents();
    expect(urgencyCounts).toEqual(['critical', 'high', 'medium', 'low'].map((u) => String(stats.urgency_breakdown[u])));
    await page.context().close();
  });

  it('raises a critical alert when a critical review arrives', async () => {
    const page = await openDashboard();
    const before = Number((await page.locator('.critical-banner').textContent().catch(() => '0'))?.match(/(\d+) critical/)?.[1] ?? 0);
    await post('/reviews', { task_type: 'ui-critical', proposed_action: 'Shut down the payment gateway', urgency: 'critical' });
    await expect.poll(async () => Number((await page.locator('.critical-banner').textContent())?.match(/(\d+) critical/)?.[1])).toBe(before + 1);
    await page.context().close();
  });

  it('sends a browser notification for a critical review while the tab is hidden, once allowed', async () => {
    const context = await browser.newContext();
    await context.grantPermissions(['notifications'], { origin: dashboard });
    const page = await context.newPage();
    // Headless Chromium has no hidden tabs or notification centre: the page is told it is
    // hidden, and each notification it creates is recorded.
    await page.addInitScript(() => {
      Object.defineProperty(document, 'hidden', { get: () => true });
      const shown: string[] = [];
      (window as unknown as { shownNotifications: string[] }).shownNotifications = shown;
      const Original = window.Notification;
      window.Notification = class extends Original {
        constructor(title: string, options?: NotificationOptions) {
          super(title, options);
          shown.push(`${title} | ${options?.body}`);
        }
      } as typeof Notification;
    });
    await page.goto(dashboard);
    await expect.poll(() => page.locator('.live').textContent()).toBe('Live');
    await post('/reviews', { task_type: 'ui-notify', proposed_action: 'Wire EUR 90,000 to a new supplier', urgency: 'critical' });
    await expect
      .poll(() => page.evaluate(() => (window as unknown as { shownNotifications: string[] }).shownNotifications))
      .toEqual(['Critical review: ui-notify | Wire EUR 90,000 to a new supplier']);
    await context.close();
  });

  it('works in a narrow window: the detail opens over the queue and goes back', async () => {
    const review = await post('/reviews', { task_type: 'ui-narrow', proposed_action: 'Merge pull request 512', urgency: 'critical' });
    const page = await openDashboard({ width: 420, height: 800 });
    await page.locator(`#review-${review.id}`).click();
    await page.keyboard.press('Enter');
    await expect.poll(() => page.locator('.detail-pane').isVisible()).toBe(true);
    expect(await page.locator('.queue-pane').isVisible()).toBe(false);
    await page.screenshot({ path: path.join(SCREENSHOTS, 'narrow-detail.png') });
    await page.getByRole('button', { name: '← Queue' }).click();
    await expect.poll(() => page.locator('.queue-pane').isVisible()).toBe(true);
    await page.context().close();
  });

  it('renders the README screenshots from a realistic queue', async () => {
    const fresh = await separateGreenlight();
    try {
      const ids = await seedSampleReviews(fresh.url);
      const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
      const page = await context.newPage();
      await page.goto(fresh.dashboardUrl!);
      await expect.poll(() => page.locator('.queue-item').count()).toBe(3);
      await page.waitForTimeout(300);
      await page.screenshot({ path: path.join(SCREENSHOTS, 'queue.png') });

      await page.locator(`#review-${ids[0]}`).click();
      await expect.poll(() => page.locator('.attachment img').evaluate((img: HTMLImageElement) => img.naturalWidth)).toBeGreaterThan(0);
      await page.locator('.detail-pane').evaluate((pane) => {
        pane.scrollTop = (pane.querySelector('#attachments-heading') as HTMLElement).offsetTop - 380;
      });
      await page.screenshot({ path: path.join(SCREENSHOTS, 'detail.png') });

      await page.getByRole('link', { name: 'Statistics' }).click();
      await expect.poll(() => page.locator('.figure').count()).toBe(7);
      await page.waitForTimeout(300);
      await page.screenshot({ path: path.join(SCREENSHOTS, 'statistics.png'), fullPage: true });
      await context.close();
    } finally {
      await stopProgram(fresh);
    }
  });
});

describe('accessibility', () => {
  it.each(['queue', 'history', 'statistics'])('the %s view has no axe-core violations (labels, contrast, roles, headings)', async (view) => {
    // The checker is injected as a script of the test's own, which the page's CSP would refuse.
    const page = await openDashboard({ bypassCSP: true });
    await page.goto(`${dashboard}/#/${view}`);
    await page.waitForTimeout(500);
    await page.addScriptTag({ path: require.resolve('axe-core/axe.min.js') });
    const violations = await page.evaluate(async () => {
      const axe = (window as unknown as { axe: { run: (context: Document) => Promise<{ violations: Array<{ id: string; impact: string; nodes: unknown[] }> }> } }).axe;
      const result = await axe.run(document);
      return result.violations.map((v) => `${v.id}: ${v.impact} (${v.nodes.length})`);
    });
    expect(violations).toEqual([]);
    await page.context().close();
  });
});

describe('the dashboard with authentication on', () => {
  it('asks for the key once, says when it is wrong, and keeps it for the session', async () => {
    const key = 'dashboard-test-key-0123456789';
    const secured = await separateGreenlight({ GREENLIGHT_ENABLE_AUTH: 'true', GREENLIGHT_API_KEY: key });
    try {
      await fetch(`${secured.url}/reviews`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
        body: JSON.stringify({ task_type: 'ui-auth', proposed_action: 'Only with the key' }),
      });
      const page = await browser.newPage();
      await page.goto(secured.dashboardUrl!);
      const prompt = page.getByRole('dialog', { name: 'This Greenlight server needs an API key' });
      await expect.poll(() => prompt.isVisible()).toBe(true);

      await page.getByLabel('API key', { exact: true }).fill('not-the-key');
      await page.getByRole('button', { name: 'Continue' }).click();
      await expect.poll(() => page.getByRole('alert').filter({ hasText: 'The server did not accept that key' }).isVisible()).toBe(true);

      await page.getByLabel('API key', { exact: true }).fill(key);
      await page.getByRole('button', { name: 'Continue' }).click();
      await expect.poll(() => page.locator('.queue-item .task').allTextContents()).toContain('ui-auth');
      await expect.poll(() => page.locator('.live').textContent()).toBe('Live');

      await page.reload();
      await expect.poll(() => page.locator('.queue-item .task').allTextContents()).toContain('ui-auth');
      expect(await prompt.isVisible()).toBe(false);
      await page.close();
    } finally {
      await stopProgram(secured);
    }
  });
});
