import fs from 'node:fs';
import path from 'node:path';
import type { Browser, Page } from 'playwright';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { axeViolations, launchChromium, letUndoWindowPass, openLiveDashboard, reviewerContext } from '../support/browser';
import { type RunningCli, startWithDashboard, stopProgram } from '../support/cli';
import { attach, onePagePdf, seedSampleReviews } from '../support/seed';
import { gradientPng } from '../support/png';
import { call } from '../support/server';
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

function openDashboard(options: { width?: number; height?: number; bypassCSP?: boolean } = {}): Promise<Page> {
  // Time runs as usual on the page, and a test moves it on past a decision's undo window.
  return openLiveDashboard(browser, dashboard, options);
}

/** A setup call, which must succeed: a failure shows here, with the API's answer, not later as a page that never changes. */
async function post(path: string, body: unknown): Promise<any> {
  const response = await fetch(`${api}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const answer = await response.json();
  if (!response.ok) throw new Error(`POST ${path} answered ${response.status}: ${JSON.stringify(answer)}`);
  return answer;
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
    await letUndoWindowPass(page);

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

  it('rejects with the keyboard: select, r, Enter, then a reason and Enter', async () => {
    const page = await openDashboard();
    const agent = agentWaitsFor({ task_type: 'ui-reject', proposed_action: 'Delete the staging database', urgency: 'critical' });
    const id = await idOf('ui-reject');
    await expect.poll(() => page.locator(`#review-${id}`).count()).toBe(1);
    await page.locator(`#review-${id}`).click();

    await page.keyboard.press('r');
    await expect.poll(() => page.locator('.armed-hint').textContent()).toBe(`Press Enter to reject review #${id}, Esc to cancel.`);
    await page.keyboard.press('Enter');
    const reason = page.getByLabel('Reason for the agent');
    await expect.poll(() => reason.evaluate((field) => field === document.activeElement)).toBe(true);
    await page.keyboard.type('Staging holds the only copy of the audit logs.');
    await page.screenshot({ path: path.join(SCREENSHOTS, 'reject-reason.png') });
    await page.keyboard.press('Enter');
    await letUndoWindowPass(page);

    const answer = await agent;
    expect(answer.body).toMatchObject({ status: 'rejected', decision: { decision_type: 'reject', notes: 'Staging holds the only copy of the audit logs.' } });
    await page.context().close();
  });

  it('asks for a reason to reject: Esc cancels, Enter on an empty reason rejects without one, typed notes skip the question', async () => {
    const withoutReason = agentWaitsFor({ task_type: 'ui-reject-skip', proposed_action: 'Disable the WAF for an hour (reject-prompt)', urgency: 'high' });
    const withNotes = agentWaitsFor({ task_type: 'ui-reject-notes', proposed_action: 'Open port 22 to the world (reject-prompt)', urgency: 'high' });
    const skipId = await idOf('ui-reject-skip');
    const notesId = await idOf('ui-reject-notes');
    const page = await queueOf('reject-prompt', 2);
    const dialog = page.getByRole('dialog', { name: `Reject review #${skipId}` });

    const reason = page.getByLabel('Reason for the agent');
    const askForReason = async (): Promise<void> => {
      await page.keyboard.press('r');
      await expect.poll(() => page.locator('.armed-hint').textContent()).toBe(`Press Enter to reject review #${skipId}, Esc to cancel.`);
      await page.keyboard.press('Enter');
      await expect.poll(() => reason.evaluate((field) => field === document.activeElement)).toBe(true);
    };
    await page.locator(`#review-${skipId}`).click();
    await askForReason();
    await page.keyboard.press('Escape');
    await expect.poll(() => dialog.isVisible()).toBe(false);
    expect(await page.locator(`#review-${skipId}`).getAttribute('aria-selected')).toBe('true');
    expect(await page.locator('.toast').count()).toBe(0);

    await askForReason();
    await page.keyboard.press('Enter');
    await expect.poll(() => page.locator(`#review-${skipId}`).count()).toBe(0);

    await page.locator(`#review-${notesId}`).click();
    await page.locator(`#notes-${notesId}`).fill('Use the bastion host.');
    await page.getByRole('button', { name: /^Reject/ }).click();
    expect(await page.getByRole('dialog').count()).toBe(0);
    await letUndoWindowPass(page);

    expect((await withoutReason).body).toMatchObject({ status: 'rejected', decision: { notes: null } });
    expect((await withNotes).body).toMatchObject({ status: 'rejected', decision: { notes: 'Use the bastion host.' } });
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
    await letUndoWindowPass(page);

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

    // The full set of filters is folded into the bar's Filters button.
    await page.getByRole('button', { name: /^Filters/ }).click();
    await page.getByRole('combobox', { name: /^Urgency/ }).selectOption('low');
    await expect.poll(async () => [...new Set(await page.locator('.queue-item .urgency').allTextContents())]).toEqual(['low']);
    await page.getByRole('combobox', { name: /^Urgency/ }).selectOption('');

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
    expect(await page.locator('.attachment[data-kind="image"] figcaption').textContent()).toContain('The receipt');
    await page.context().close();
  });

  it('shows a lost race as the decision that stands, with who made it', async () => {
    const review = await post('/reviews', { task_type: 'ui-race', proposed_action: 'Disable 2FA for user 77', urgency: 'high' });
    // Live events held back, as on a slow connection: the reviewer does not learn of the
    // other decision before clicking.
    const slowContext = await reviewerContext(browser, { viewport: { width: 1280, height: 800 } });
    await slowContext.clock.install();
    const slow = await slowContext.newPage();
    await slow.route('**/api/events', (route) => route.abort());
    await slow.goto(dashboard);
    await expect.poll(() => slow.locator(`#review-${review.id}`).count()).toBe(1);
    await slow.locator(`#review-${review.id}`).click();
    await post(`/reviews/${review.id}/decide`, { decision_type: 'reject', reviewer_name: 'bo@example.com', notes: 'Not without a ticket.' });

    await slow.getByRole('button', { name: /^Approve/ }).click();

    // The decision is sent once its undo window has passed.
    await letUndoWindowPass(slow);
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
    const context = await reviewerContext(browser);
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
      const context = await reviewerContext(browser, { viewport: { width: 1280, height: 800 } });
      const page = await context.newPage();
      await page.goto(fresh.dashboardUrl!);
      await expect.poll(() => page.locator('.queue-item').count()).toBe(3);
      await page.waitForTimeout(300);
      await page.screenshot({ path: path.join(SCREENSHOTS, 'queue.png') });

      await page.locator(`#review-${ids[0]}`).click();
      await expect.poll(() => page.locator('.attachment img').evaluate((img: HTMLImageElement) => img.naturalWidth)).toBeGreaterThan(0);
      // The attachments card, captions included, just above the decision bar.
      await page.locator('.detail-pane').evaluate((pane) => {
        const card = pane.querySelector('#attachments-heading')!.closest('.card')!;
        const bar = pane.querySelector('.decision-bar')!;
        pane.scrollTop += card.getBoundingClientRect().bottom - bar.getBoundingClientRect().top + 16;
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

type Box = { x: number; y: number; width: number; height: number };
const overlap = (a: Box, b: Box): boolean => a.x < b.x + b.width && b.x < a.x + a.width && a.y < b.y + b.height && b.y < a.y + a.height;

async function reviewStatusOnServer(id: number): Promise<string> {
  return ((await (await fetch(`${api}/reviews/${id}`)).json()) as { status: string }).status;
}

/** Opens the dashboard with only the reviews whose action contains `token` in the queue. */
async function queueOf(token: string, count: number, viewport: { width?: number; height?: number } = {}): Promise<Page> {
  const page = await openDashboard(viewport);
  await page.getByLabel('Search in actions').fill(token);
  await expect.poll(() => page.locator('.filter-chips .chip').allTextContents()).toEqual([`Search: “${token}”`]);
  await expect.poll(() => page.locator('.queue-item').count()).toBe(count);
  return page;
}

describe('decisions held for a few seconds, with Undo', () => {
  it.each([
    [1280, 800],
    [360, 740],
  ])('the toast covers no part of the decision bar or its hint in a %i px wide window', async (width, height) => {
    const token = `toast-${width}-px`;
    const first = await post('/reviews', { task_type: 'ui-toast', proposed_action: `Close ticket 1 (${token})`, urgency: 'low' });
    const second = await post('/reviews', { task_type: 'ui-toast', proposed_action: `Close ticket 2 (${token})`, urgency: 'low' });
    const page = await queueOf(token, 2, { width, height });
    await page.locator(`#review-${first.id}`).click();
    await page.keyboard.press('Enter');
    await page.getByRole('button', { name: /^Approve/ }).click();

    const toast = page.locator('.toast', { hasText: `review #${first.id}` });
    await expect.poll(() => toast.isVisible()).toBe(true);
    await expect.poll(() => page.locator('.detail-head h2').textContent()).toContain(`#${second.id}`);
    await page.keyboard.press('a');
    await expect.poll(() => page.locator('.armed-hint').isVisible()).toBe(true);
    const toastBox = (await toast.boundingBox())!;
    for (const part of ['.decision-bar', '.decision-actions', '.armed-hint']) {
      expect(overlap(toastBox, (await page.locator(part).boundingBox())!), `the toast covers ${part}`).toBe(false);
    }
    // Where the list shows beside the detail, the toasts sit below it.
    if (await page.locator('#queue-list').isVisible()) expect(overlap(toastBox, (await page.locator('#queue-list').boundingBox())!), 'the toast covers the queue').toBe(false);
    await page.screenshot({ path: path.join(SCREENSHOTS, width < 900 ? 'undo-toast-narrow.png' : 'undo-toast.png') });
    await toast.getByRole('button', { name: 'Undo' }).click();
    await page.context().close();
  });

  it('Undo within the window sends nothing and puts the review back in the queue, selected', async () => {
    const token = 'undo-keeps-it-pending';
    const kept = await post('/reviews', { task_type: 'ui-undo', proposed_action: `Reset the password of user 12 (${token})`, urgency: 'high' });
    const agent = agentWaitsFor({ task_type: 'ui-undo', proposed_action: `Reset the password of user 13 (${token})`, urgency: 'high' });
    const page = await queueOf(token, 2);
    await page.locator(`#review-${kept.id}`).click();
    await page.getByRole('button', { name: /^Approve/ }).click();

    const toast = page.locator('.toast', { hasText: `review #${kept.id}` });
    await expect.poll(() => toast.textContent()).toMatch(new RegExp(`^Approving review #${kept.id} \\(ui-undo\\)`));
    await expect.poll(() => page.locator(`#review-${kept.id}`).count()).toBe(0);
    await page.keyboard.press('u');
    await expect.poll(() => page.locator(`#review-${kept.id}`).getAttribute('aria-selected')).toBe('true');
    expect(await toast.textContent()).toBe(`Undone: review #${kept.id} (ui-undo) is back in the queue`);

    // Every window ends here, the undone one's too had it been left open: once the other agent
    // has its answer, the undone decision's moment has certainly passed.
    await page.locator('.queue-item', { hasText: 'user 13' }).click();
    await page.getByRole('button', { name: /^Approve/ }).click();
    await letUndoWindowPass(page);
    expect((await agent).body.status).toBe('approved');
    expect(await reviewStatusOnServer(kept.id)).toBe('pending');
    expect(await page.locator(`#review-${kept.id}`).count()).toBe(1);
    await page.context().close();
  });

  it('sends a held decision at once when the page is left', async () => {
    const agent = agentWaitsFor({ task_type: 'ui-leave', proposed_action: 'Extend the trial of tenant 31 (leaving-page)', urgency: 'medium' });
    const id = await idOf('ui-leave');
    const page = await queueOf('leaving-page', 1);
    await page.getByLabel('Reviewer').fill('lee@example.com');
    await page.getByLabel('Reviewer').press('Tab');
    await page.locator(`#review-${id}`).click();
    await page.locator(`#notes-${id}`).fill('Two more weeks.');
    await page.getByRole('button', { name: /^Approve/ }).click();
    await expect.poll(() => page.locator('.toast', { hasText: `Approving review #${id}` }).count()).toBe(1);

    await page.reload();

    await expect.poll(() => reviewStatusOnServer(id)).toBe('approved');
    expect((await agent).body.decision).toMatchObject({ decision_type: 'approve', reviewer_name: 'lee@example.com', notes: 'Two more weeks.' });
    await page.context().close();
  });

  it('drops a held decision when another reviewer decides first, and shows what stands', async () => {
    const review = await post('/reviews', { task_type: 'ui-held-race', proposed_action: 'Unlock account 88 (held-race)', urgency: 'high' });
    const page = await queueOf('held-race', 1);
    await page.locator(`#review-${review.id}`).click();
    await page.getByRole('button', { name: /^Approve/ }).click();
    await expect.poll(() => page.locator('.toast', { hasText: `Approving review #${review.id}` }).count()).toBe(1);

    await post(`/reviews/${review.id}/decide`, { decision_type: 'reject', reviewer_name: 'bo@example.com', notes: 'Fraud suspected.' });

    await expect.poll(() => page.locator('.outcome h3').textContent()).toBe('Already decided: bo@example.com rejected it before your decision arrived.');
    expect(await page.locator('.toast', { hasText: `review #${review.id}` }).count()).toBe(0);
    expect(((await (await fetch(`${api}/reviews/${review.id}`)).json()) as { decision: { notes: string } }).decision.notes).toBe('Fraud suspected.');
    await page.context().close();
  });
});

/** "24 Nov 2026, 14:03": the one way the dashboard writes a moment. */
const DATE_TIME = /^\d{1,2} [A-Z][a-z]{2} \d{4}, \d{2}:\d{2}$/;

describe('dates and decided reviews', () => {
  it('writes every date one way, and a decided review says when it was decided, not how long ago it was opened', async () => {
    const review = await post('/reviews', { task_type: 'ui-dates', proposed_action: 'Archive project Zeta (dates-everywhere)', urgency: 'low' });
    const page = await queueOf('dates-everywhere', 1);
    const row = page.locator(`#review-${review.id}`);
    expect(await row.locator('.age').getAttribute('title')).toMatch(/^Requested \d/);
    const requested = (await row.locator('.age').getAttribute('title'))!.replace('Requested ', '');
    await row.click();
    const facts = page.locator('.facts time');
    await expect.poll(() => facts.first().textContent()).toBe(requested);
    expect(await page.locator('.timeline time').first().textContent()).toBe(requested);
    expect(requested).toMatch(DATE_TIME);
    // The age of a pending review says it is one: "waiting" is an agent's.
    expect(await page.locator('.detail-head .age').textContent()).toMatch(/^opened \d+s ago$/);

    await post(`/reviews/${review.id}/decide`, { decision_type: 'approve', reviewer_name: 'kim@example.com' });
    await expect.poll(() => page.locator('.outcome time').textContent()).toMatch(DATE_TIME);
    const decided = await page.locator('.outcome time').textContent();
    expect(await page.locator('.detail-head .age').textContent()).toMatch(new RegExp(`^decided ${decided} after \\d+s$`));

    await page.getByRole('link', { name: 'History' }).click();
    const historyRow = page.locator('.history tbody tr', { hasText: `ui-dates #${review.id}` });
    await expect.poll(() => historyRow.locator('td').first().textContent()).toBe(decided);
    await historyRow.getByRole('link').click();
    await expect.poll(() => page.locator('.detail-head .age').textContent()).toMatch(new RegExp(`^decided ${decided} after \\d+s$`));
    expect(await page.locator('.timeline time').allTextContents()).toEqual([requested, decided]);
    await page.context().close();
  });
});

describe('queue filters', () => {
  it('shows active filters as chips, clears them, counts pending reviews per urgency, and says what an empty filter hides', async () => {
    const fresh = await separateGreenlight();
    try {
      const create = async (urgency: string, task_type: string, proposed_action: string) =>
        (await call(fresh.url, 'POST', '/reviews', { task_type, proposed_action, urgency })).body as { id: number };
      const critical = await create('critical', 'deploy', 'Deploy hotfix 7 to production');
      await create('high', 'refund', 'Refund invoice 1042');
      await create('low', 'refund', 'Refund invoice 1043');
      await create('low', 'email', 'Send the weekly digest');
      const page = await (await reviewerContext(browser, { viewport: { width: 1280, height: 800 } })).newPage();
      await page.goto(fresh.dashboardUrl!);
      await page.getByRole('button', { name: /^Filters/ }).click();
      const counts = () => page.locator('.urgency-counts button').allTextContents();
      const chips = () => page.locator('.filter-chips .chip').allTextContents();
      await expect.poll(counts).toEqual(['critical 1', 'high 1', 'medium 0', 'low 2']);
      expect(await chips()).toEqual([]);

      await page.getByRole('button', { name: 'Show critical' }).click();
      await expect.poll(chips).toEqual(['Urgency: critical']);
      await expect.poll(() => page.locator('.queue-item').count()).toBe(1);

      await call(fresh.url, 'POST', `/reviews/${critical.id}/decide`, { decision_type: 'approve', reviewer_name: 'sam@example.com' });
      await expect.poll(() => page.locator('.queue-pane .empty').textContent()).toBe('No critical reviews pending3 others are pending.Clear filters');
      expect(await counts()).toEqual(['critical 0', 'high 1', 'medium 0', 'low 2']);
      await page.locator('.queue-pane .empty').getByRole('button', { name: 'Clear filters' }).click();
      await expect.poll(() => page.locator('.queue-item').count()).toBe(3);
      expect(await chips()).toEqual([]);

      await page.getByLabel('Search in actions').fill('invoice');
      await page.getByRole('combobox', { name: /^Task type/ }).selectOption('refund');
      await expect.poll(chips).toEqual(['Task type: refund', 'Search: “invoice”']);
      await page.getByRole('button', { name: 'Remove the filter Search: “invoice”' }).click();
      await expect.poll(chips).toEqual(['Task type: refund']);
      expect(await page.getByLabel('Search in actions').inputValue()).toBe('');
      await page.getByRole('combobox', { name: /^Status/ }).selectOption('approved');
      await expect.poll(chips).toEqual(['Status: approved', 'Task type: refund']);
      await page.getByRole('button', { name: 'Clear all' }).click();
      await expect.poll(chips).toEqual([]);
      expect(await page.getByRole('combobox', { name: /^Status/ }).inputValue()).toBe('pending');
      await expect.poll(() => page.locator('.queue-item').count()).toBe(3);

      await page.locator('.urgency-counts').getByRole('button', { name: 'low 2' }).click();
      await expect.poll(chips).toEqual(['Urgency: low']);
      await expect.poll(() => page.locator('.queue-item').count()).toBe(2);
      await page.context().close();
    } finally {
      await stopProgram(fresh);
    }
  });
});

/** What the API says is pending, to compare with what the dashboard shows. */
async function pendingOnServer(): Promise<{ all: number; critical: number }> {
  const count = async (query: string) => ((await (await fetch(`${api}/reviews?status=pending&page_size=1${query}`)).json()) as { total: number }).total;
  return { all: await count(''), critical: await count('&urgency=critical') };
}

/** The counts the dashboard shows: the header's pending badge and the critical banner (0 when hidden). */
async function pendingShown(page: Page): Promise<{ all: number; critical: number }> {
  const banner = page.locator('.critical-banner');
  const critical = (await banner.count()) === 0 ? 0 : Number((await banner.textContent())?.match(/(\d+) critical/)?.[1]);
  return { all: Number(await page.locator('.nav .count').textContent()), critical };
}

describe('live updates around (re)connecting', () => {
  it('shows a critical review created while the live stream was still opening, and counts it', async () => {
    const context = await reviewerContext(browser, { viewport: { width: 1280, height: 800 } });
    const page = await context.newPage();
    let openStream!: () => void;
    const streamMayOpen = new Promise<void>((resolve) => (openStream = resolve));
    await page.route('**/api/events', async (route) => {
      await streamMayOpen;
      await route.continue();
    });
    const queueRead = page.waitForResponse((response) => /\/api\/reviews\?.*sort=priority/.test(response.url()));
    await page.goto(dashboard);
    await queueRead;
    const before = await pendingOnServer();
    await expect.poll(() => pendingShown(page)).toEqual(before);

    const review = await post('/reviews', { task_type: 'ui-gap', proposed_action: 'Fail over the primary database', urgency: 'critical' });
    openStream();

    await expect.poll(() => page.locator(`#review-${review.id}`).count()).toBe(1);
    await expect.poll(() => pendingShown(page)).toEqual({ all: before.all + 1, critical: before.critical + 1 });
    expect(await page.locator('.live').textContent()).toBe('Live');
    await context.close();
  });

  it('shows a review created while the stream was reconnecting', async () => {
    const context = await reviewerContext(browser, { viewport: { width: 1280, height: 800 } });
    const page = await context.newPage();
    let streams = 0;
    let reconnecting!: () => void;
    const reconnectAsked = new Promise<void>((resolve) => (reconnecting = resolve));
    let letReconnect!: () => void;
    const reconnectMayOpen = new Promise<void>((resolve) => (letReconnect = resolve));
    await page.route('**/api/events', async (route) => {
      streams += 1;
      // The first stream opens and ends at once, as when a proxy drops an idle connection.
      if (streams === 1) return route.fulfill({ status: 200, headers: { 'content-type': 'text/event-stream' }, body: ': connected\n\n' });
      if (streams === 2) {
        reconnecting();
        await reconnectMayOpen;
      }
      await route.continue();
    });
    await page.goto(dashboard);
    await reconnectAsked;
    await expect.poll(() => page.locator('.live').textContent()).toBe('Reconnecting…');
    const before = await pendingOnServer();
    await expect.poll(() => pendingShown(page)).toEqual(before);

    const review = await post('/reviews', { task_type: 'ui-reconnect', proposed_action: 'Purge the CDN cache', urgency: 'critical' });
    letReconnect();

    await expect.poll(() => page.locator('.live').textContent()).toBe('Live');
    await expect.poll(() => page.locator(`#review-${review.id}`).count()).toBe(1);
    await expect.poll(() => pendingShown(page)).toEqual({ all: before.all + 1, critical: before.critical + 1 });
    await context.close();
  });

  it('loses no review created while the dashboard was re-reading after connecting', async () => {
    const context = await reviewerContext(browser, { viewport: { width: 1280, height: 800 } });
    const page = await context.newPage();
    // The reads reach the server at once, but their answers are held back: the server answered
    // before the review below existed, and the page learns of it first from the live stream.
    const answered: string[] = [];
    let release!: () => void;
    const answersMayGo = new Promise<void>((resolve) => (release = resolve));
    await page.route(/\/api\/(reviews\?|stats)/, async (route) => {
      const response = await route.fetch();
      answered.push(route.request().url());
      await answersMayGo;
      await route.fulfill({ response });
    });
    const before = await pendingOnServer();
    await page.goto(dashboard);
    await expect.poll(() => page.locator('.live').textContent()).toBe('Live');
    await expect.poll(() => answered.some((url) => url.includes('sort=priority')) && answered.some((url) => url.includes('urgency=critical'))).toBe(true);

    const review = await post('/reviews', { task_type: 'ui-during-read', proposed_action: 'Revoke every session of tenant 4', urgency: 'critical' });
    await expect.poll(() => page.locator('.critical-banner').count()).toBe(1);
    release();

    await expect.poll(() => page.locator(`#review-${review.id}`).count()).toBe(1);
    await expect.poll(() => pendingShown(page)).toEqual({ all: before.all + 1, critical: before.critical + 1 });
    // Reads the page still makes (live counts) must not reach a handler whose context is gone.
    await page.unrouteAll({ behavior: 'ignoreErrors' });
    await context.close();
  });
});

describe('accessibility', () => {
  it.each(['queue', 'history', 'statistics'])('the %s view has no axe-core violations (labels, contrast, roles, headings)', async (view) => {
    // The checker is injected as a script of the test's own, which the page's CSP would refuse.
    const page = await openDashboard({ bypassCSP: true });
    await page.goto(`${dashboard}/#/${view}`);
    await page.waitForTimeout(500);
    expect(await axeViolations(page)).toEqual([]);
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
      const page = await (await reviewerContext(browser)).newPage();
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

/** Where `part` of the text in `selector` is drawn. */
async function boxOf(page: Page, selector: string, part: string): Promise<{ left: number; top: number; bottom: number }> {
  return page.locator(selector).evaluate((element, wanted) => {
    const walker = document.createTreeWalker(element, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      const at = node.textContent!.indexOf(wanted);
      if (at < 0) continue;
      const range = document.createRange();
      range.setStart(node, at);
      range.setEnd(node, at + wanted.length);
      const { left, top, bottom } = range.getBoundingClientRect();
      return { left, top, bottom };
    }
    throw new Error(`${wanted} is not in ${element.textContent}`);
  }, part);
}

/** Whether `part` of the text in `selector` is in the detail pane's view, above the decision bar. */
async function inView(page: Page, selector: string, part: string): Promise<boolean> {
  const box = await boxOf(page, selector, part);
  const pane = (await page.locator('.detail-pane').boundingBox())!;
  const bar = await page.locator('.decision-bar').boundingBox();
  return box.top >= pane.y && box.bottom <= (bar?.y ?? pane.y + pane.height);
}

describe('a reviewer sees exactly what will run', () => {
  it('marks hidden characters where they stand, keeps the stored order, flags mixed scripts, and warns on the review and its row', async () => {
    const action = 'echo "cleaning build cache" \u202E; rm -rf ~; #\u202C (hidden-chars)';
    const review = await post('/reviews', {
      task_type: 'ui-hidden',
      proposed_action: action,
      agent_reasoning: 'The cache is stale; sign in to pаypal.com to confirm the refund.',
      urgency: 'high',
      metadata: { 'target\u200B': 'prod', labels: ['cleanup\u2066'] },
    });
    await attach(api, review.id, 'build log\n', 'report\u200B.txt', 'text/plain');
    const page = await queueOf('hidden-chars', 1);
    const row = page.locator(`#review-${review.id}`);
    expect(await row.locator('.text-flag').textContent()).toBe('⚠ 4 hidden characters');
    expect(await row.locator('.action').textContent()).toBe('echo "cleaning build cache" ⟦U+202E⟧; rm -rf ~; #⟦U+202C⟧ (hidden-chars)');
    await row.click();

    const proposed = page.locator('pre.proposed');
    expect(await proposed.textContent()).toBe('echo "cleaning build cache" ⟦U+202E⟧; rm -rf ~; #⟦U+202C⟧ (hidden-chars)');
    expect(await proposed.locator('.hidden-char').first().getAttribute('aria-label')).toBe(
      'Hidden character U+202E RIGHT-TO-LEFT OVERRIDE: reorders the text shown around it',
    );
    // Drawn in the order it is stored: nothing after the override is mirrored to the left.
    const [cache, rm, hash] = await Promise.all(['cache', 'rm -rf', '#'].map(async (part) => (await boxOf(page, 'pre.proposed', part)).left));
    expect(cache).toBeLessThan(rm);
    expect(rm).toBeLessThan(hash);

    const warning = page.getByRole('alert').filter({ hasText: 'This review holds text that can hide or disguise what it says' });
    await expect.poll(() => warning.locator('li').allTextContents()).toEqual([
      'In the proposed action: 2 characters that reorder text (U+202E, U+202C).',
      "In the agent's reasoning: a word mixing Latin and Cyrillic letters: “pаypal” (а is Cyrillic).",
      'In the metadata: 1 character that reorders text (U+2066); 1 invisible character (U+200B).',
      'In the attachments: 1 invisible character (U+200B).',
    ]);
    expect(await page.locator('.reasoning .mixed-script .foreign-letter').textContent()).toBe('а');
    expect(await page.locator('.tree').first().textContent()).toContain('target⟦U+200B⟧');
    expect(await page.locator('.attachment figcaption .file').textContent()).toContain('report⟦U+200B⟧.txt');
    await page.screenshot({ path: path.join(SCREENSHOTS, 'hidden-characters.png') });

    // The editor, a plain textarea, holds the marks as text: nothing in it is shown reordered.
    await page.keyboard.press('m');
    const editor = page.getByLabel('The action the agent should carry out instead');
    await expect.poll(() => editor.inputValue()).toBe('echo "cleaning build cache" ⟦U+202E⟧; rm -rf ~; #⟦U+202C⟧ (hidden-chars)');
    expect(await page.locator('.editor-note').textContent()).toContain('Leave a mark as it is to keep what it stands for; delete it to remove it.');
    await page.screenshot({ path: path.join(SCREENSHOTS, 'modify-hidden-characters.png') });
    await editor.fill('echo "cleaning build cache"; rm -rf ./build (hidden-chars)');
    await page.getByRole('button', { name: 'Approve with changes' }).click();
    await letUndoWindowPass(page);
    await expect
      .poll(async () => ((await (await fetch(`${api}/reviews/${review.id}`)).json()) as any).decision?.modified_action)
      .toBe('echo "cleaning build cache"; rm -rf ./build (hidden-chars)');
    await page.context().close();
  });

  it('shows a long run of blank lines as one marked line, so the tail of the action is in view with Approve, and says how long the action is', async () => {
    const review = await post('/reviews', {
      task_type: 'ui-long-tail',
      proposed_action: `Refund order 1042 in full (long-tail)${'\n'.repeat(300)}; and wire EUR 1,000,000 to DE89 3704 0044 0532 0130 00`,
      urgency: 'high',
    });
    const page = await queueOf('long-tail', 1);
    await page.locator(`#review-${review.id}`).click();
    const proposed = page.locator('pre.proposed');
    expect(await proposed.textContent()).toBe('Refund order 1042 in full (long-tail)\n⟦299 blank lines⟧\n; and wire EUR 1,000,000 to DE89 3704 0044 0532 0130 00');
    expect(await page.locator('#proposed-heading + .action-size').textContent()).toBe('392 characters · 301 lines');
    expect(await inView(page, 'pre.proposed', 'and wire EUR 1,000,000')).toBe(true);
    expect(await page.getByRole('button', { name: /^Approve/ }).isEnabled()).toBe(true);
    expect(await page.locator('.text-warning li').allTextContents()).toEqual(['In the proposed action: 299 blank lines in a row.']);
    await page.screenshot({ path: path.join(SCREENSHOTS, 'long-tail.png') });
    await page.context().close();
  });

  it('holds Approve, button and a key, until the end of a long action has been on screen', async () => {
    const action = `${Array.from({ length: 120 }, (_, i) => `UPDATE accounts SET flagged = false WHERE id = ${i + 1};`).join('\n')}\nUPDATE payouts SET iban = 'DE89 3704' WHERE id = 7; -- approve-hold`;
    const agent = agentWaitsFor({ task_type: 'ui-approve-hold', proposed_action: action, urgency: 'high' });
    const id = await idOf('ui-approve-hold');
    const page = await queueOf('approve-hold', 1);
    await page.locator(`#review-${id}`).click();

    const approve = page.getByRole('button', { name: /^Approve/ });
    const hold = page.locator('.approve-hold');
    await expect.poll(() => hold.textContent()).toContain('Approve waits until the last line of the action has been in view (6,199 characters · 121 lines).');
    expect(await approve.isDisabled()).toBe(true);
    await page.keyboard.press('a');
    await expect.poll(() => hold.getAttribute('class')).toContain('noticed');
    await page.screenshot({ path: path.join(SCREENSHOTS, 'approve-held.png') });
    expect(await page.locator('.armed-hint').count()).toBe(0);
    await page.keyboard.press('Enter');
    expect(await page.locator('.toast').count()).toBe(0);
    expect(await reviewStatusOnServer(id)).toBe('pending');

    // Past the end is not at the end: the last line flew by.
    await page.locator('.detail-pane').evaluate((pane) => pane.scrollTo({ top: pane.scrollHeight }));
    expect(await approve.isDisabled()).toBe(true);
    await hold.getByRole('button', { name: 'Show the last line' }).click();
    await expect.poll(() => approve.isEnabled()).toBe(true);
    expect(await inView(page, 'pre.proposed', '-- approve-hold')).toBe(true);
    expect(await hold.count()).toBe(0);
    await page.keyboard.press('a');
    await page.keyboard.press('Enter');
    await letUndoWindowPass(page);
    expect((await agent).body.status).toBe('approved');
    await page.context().close();
  });

  it('opens the next review at its top after the last was scrolled, and its Approve waits for its own end', async () => {
    const long = (n: number) => `${Array.from({ length: 100 }, (_, i) => `rm /var/cache/app/${n}/part-${i}.bin`).join('\n')}\n# opens-at-top ${n}`;
    const first = await post('/reviews', { task_type: 'ui-top', proposed_action: long(1), urgency: 'low' });
    const second = await post('/reviews', { task_type: 'ui-top', proposed_action: long(2), urgency: 'low' });
    const page = await queueOf('opens-at-top', 2);
    await page.locator(`#review-${first.id}`).click();
    await page.locator('.action-end').evaluate((end) => end.scrollIntoView({ block: 'center' }));
    await expect.poll(() => page.getByRole('button', { name: /^Approve/ }).isEnabled()).toBe(true);
    await page.locator('.detail-pane').evaluate((pane) => pane.scrollTo({ top: pane.scrollHeight }));

    await page.keyboard.press('j');
    await expect.poll(() => page.locator('.detail-head h2').textContent()).toContain(`#${second.id}`);
    expect(await page.locator('.detail-pane').evaluate((pane) => pane.scrollTop)).toBe(0);
    expect(await inView(page, '.detail-head h2', `#${second.id}`)).toBe(true);
    expect(await inView(page, 'pre.proposed', 'rm /var/cache/app/2/part-0.bin')).toBe(true);
    await page.keyboard.press('a');
    await page.keyboard.press('Enter');
    expect(await page.getByRole('button', { name: /^Approve/ }).isDisabled()).toBe(true);
    expect(await page.locator('.toast').count()).toBe(0);
    expect(await reviewStatusOnServer(second.id)).toBe('pending');
    await page.context().close();
  });

  it('shows a modified action against the proposed one, in monospace with its line breaks: in History, in its detail, and when decided meanwhile', async () => {
    const modified = "DELETE FROM sessions\n-- only the stale ones:\nWHERE last_seen < now() - interval '30 days';";
    const lines = modified.split('\n');
    const decided = await post('/reviews', { task_type: 'ui-sql', proposed_action: 'DELETE FROM sessions; (sql-modified)', urgency: 'low' });
    await post(`/reviews/${decided.id}/decide`, { decision_type: 'modify', modified_action: modified, reviewer_name: 'kim@example.com' });
    const looksLikeCode = async (locator: ReturnType<Page['locator']>) => {
      const style = await locator.evaluate((element) => [getComputedStyle(element).whiteSpace, getComputedStyle(element).fontFamily]);
      return { whiteSpace: style[0], monospace: /monospace/.test(style[1]), lines: (await locator.innerText()).split('\n') };
    };
    /** The diff's added lines, each as drawn: white space kept, monospace, and its text. */
    const addedLines = (scope: ReturnType<Page['locator']>) =>
      scope.locator('.diff-line.added .diff-text').evaluateAll((texts) =>
        texts.map((text) => {
          const shown = text.cloneNode(true) as HTMLElement;
          shown.querySelector('.visually-hidden')?.remove();
          return { whiteSpace: getComputedStyle(text).whiteSpace, monospace: /monospace/.test(getComputedStyle(text).fontFamily), text: shown.textContent };
        }),
      );
    const drawnAsCode = lines.map((text) => ({ whiteSpace: 'pre-wrap', monospace: true, text }));

    const page = await openDashboard();
    await page.getByRole('link', { name: 'History' }).click();
    const row = page.locator('.history tbody tr', { hasText: `ui-sql #${decided.id}` });
    // With whether History is open and what it says if it could not read the list: a row that never comes shows why.
    const shown = async () => ({
      history: await page.locator('section.history').count(),
      alerts: await page.locator('.history [role="alert"]').allTextContents(),
      added: await addedLines(row),
    });
    await expect.poll(shown).toEqual({ history: 1, alerts: [], added: drawnAsCode });
    expect(await row.locator('.diff-line.removed').count()).toBe(1);
    await row.getByRole('link', { name: `ui-sql #${decided.id}` }).click();
    const decision = page.locator('section', { has: page.locator('#decision-heading') });
    await expect.poll(() => addedLines(decision)).toEqual(drawnAsCode);
    await decision.getByRole('button', { name: 'Show the approved text alone' }).click();
    expect(await looksLikeCode(page.locator('pre.modified'))).toEqual({ whiteSpace: 'pre-wrap', monospace: true, lines });

    await page.context().close();

    const meanwhile = await post('/reviews', { task_type: 'ui-sql-meanwhile', proposed_action: 'DELETE FROM sessions; (sql-meanwhile)', urgency: 'low' });
    const reviewing = await queueOf('sql-meanwhile', 1);
    await reviewing.locator(`#review-${meanwhile.id}`).click();
    await post(`/reviews/${meanwhile.id}/decide`, { decision_type: 'modify', modified_action: modified, reviewer_name: 'kim@example.com' });
    await expect.poll(() => reviewing.locator('.outcome h3').textContent()).toBe('Decided meanwhile: kim@example.com approved with changes it.');
    expect(await addedLines(reviewing.locator('.outcome'))).toEqual(drawnAsCode);
    await reviewing.context().close();
  });
});
