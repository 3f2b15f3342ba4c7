import path from 'node:path';
import type { Page } from 'playwright';
import { describe, expect, it } from 'vitest';
import { dashboardInBrowser, letUndoWindowPass, reviewerContext } from '../support/browser';
import { call } from '../support/server';

/**
 * Reviews by their address (`#/reviews/<id>`) in the self-hosted dashboard, agents by their
 * names, and the one prompt for a reviewer's name before a first decision.
 */

const running = dashboardInBrowser('greenlight-review-links-');
const SCREENSHOTS = path.resolve(__dirname, '..', '..', 'docs', 'screenshots');

async function file(body: Record<string, unknown>): Promise<{ id: number; links: { dashboard: string } }> {
  const created = await call(running.server.url, 'POST', '/reviews', { urgency: 'medium', ...body });
  expect(created.status).toBe(201);
  return created.body;
}

async function open(address: string, asked = true, viewport = { width: 1280, height: 800 }): Promise<Page> {
  const context = asked ? await reviewerContext(running.browser, { viewport }) : await running.browser.newContext({ viewport });
  await context.clock.install();
  const page = await context.newPage();
  page.on('pageerror', (error) => {
    throw error;
  });
  await page.goto(address);
  return page;
}

const hashOf = (page: Page) => new URL(page.url()).hash;

describe('a review by its address', () => {
  it('opens a pending review cold in the queue, follows j, goes Back, and survives a reload', async () => {
    const first = await file({ task_type: 'link-refund', proposed_action: 'Refund order 1 (link test)', urgency: 'critical' });
    const second = await file({ task_type: 'link-refund', proposed_action: 'Refund order 2 (link test)', urgency: 'critical' });
    const third = await file({ task_type: 'link-refund', proposed_action: 'Refund order 3 (link test)', urgency: 'critical' });
    expect(second.links.dashboard).toBe(`${running.server.dashboardUrl}/#/reviews/${second.id}`);

    const page = await open(second.links.dashboard);
    await expect.poll(() => page.locator('.detail-pane h2').first().textContent()).toContain('link-refund');
    await expect.poll(() => page.locator(`#review-${second.id}`).getAttribute('aria-selected')).toBe('true');
    expect(hashOf(page)).toBe(`#/reviews/${second.id}`);
    await expect.poll(() => page.locator('.detail-pane').textContent()).toContain('Refund order 2 (link test)');

    await page.keyboard.press('j');
    await expect.poll(() => hashOf(page)).toBe(`#/reviews/${third.id}`);
    await expect.poll(() => page.locator('.detail-pane').textContent()).toContain('Refund order 3 (link test)');
    await page.keyboard.press('k');
    await page.keyboard.press('k');
    await expect.poll(() => hashOf(page)).toBe(`#/reviews/${first.id}`);

    await page.goBack();
    await expect.poll(() => hashOf(page)).toBe(`#/reviews/${second.id}`);
    await expect.poll(() => page.locator(`#review-${second.id}`).getAttribute('aria-selected')).toBe('true');
    await expect.poll(() => page.locator('.detail-pane').textContent()).toContain('Refund order 2 (link test)');
    await page.goBack();
    await expect.poll(() => hashOf(page)).toBe(`#/reviews/${third.id}`);
    await expect.poll(() => page.locator('.detail-pane').textContent()).toContain('Refund order 3 (link test)');

    await page.reload();
    await expect.poll(() => page.locator('.detail-pane').textContent()).toContain('Refund order 3 (link test)');
    expect(hashOf(page)).toBe(`#/reviews/${third.id}`);
    await page.context().close();
  });

  it('shows the review the address names again when the address returns to it before the dashboard saw it leave', async () => {
    const before = await file({ task_type: 'link-return', proposed_action: 'Refund order 4 (link test)', urgency: 'critical' });
    const after = await file({ task_type: 'link-return', proposed_action: 'Refund order 5 (link test)', urgency: 'critical' });
    const page = await open(after.links.dashboard);
    await expect.poll(() => page.locator(`#review-${after.id}`).getAttribute('aria-selected')).toBe('true');

    // `k` moves to the review before and adds its address; the address then returns, within the
    // same task, before the dashboard handles the change — as Back does when it overtakes a
    // quick move's event.
    const moved = await page.evaluate(async (returnTo) => {
      const left = location.hash;
      document.body.dispatchEvent(new KeyboardEvent('keydown', { key: 'k', bubbles: true }));
      for (let turns = 0; location.hash === left && turns < 100; turns++) await Promise.resolve();
      const movedTo = location.hash;
      history.replaceState(history.state, '', returnTo);
      return movedTo;
    }, `#/reviews/${after.id}`);
    expect(moved).toBe(`#/reviews/${before.id}`);

    await expect.poll(() => page.locator(`#review-${after.id}`).getAttribute('aria-selected')).toBe('true');
    await expect.poll(() => page.locator('.detail-pane').textContent()).toContain('Refund order 5 (link test)');
    expect(hashOf(page)).toBe(`#/reviews/${after.id}`);
    await page.context().close();
  });

  it('opens a pending review further down the queue than its first page (100 reviews) cold, listed and selected', async () => {
    const ahead = Array.from({ length: 105 }, (_, i) => ({ task_type: 'link-ahead', proposed_action: `Tag ticket ${i} (ahead)`, urgency: 'high' }));
    await Promise.all(ahead.map((body) => file(body)));
    const far = await file({ task_type: 'link-far', proposed_action: 'Archive the 2019 audit folder (far down)', urgency: 'low' });

    const page = await open(far.links.dashboard);
    await expect.poll(() => page.locator('.detail-pane').textContent()).toContain('Archive the 2019 audit folder (far down)');
    // Scrolled to, not only selected: the list draws the rows in view only.
    await expect.poll(() => page.locator(`#review-${far.id}`).getAttribute('aria-selected', { timeout: 500 })).toBe('true');
    expect(hashOf(page)).toBe(`#/reviews/${far.id}`);
    await page.context().close();
    const pending = (await call(running.server.url, 'GET', '/reviews?task_type=link-ahead&page_size=100')).body.reviews as Array<{ id: number }>;
    await Promise.all([...pending, far].map(({ id }) => call(running.server.url, 'POST', `/reviews/${id}/decide`, { decision_type: 'reject' })));
  });

  it('opens a decided review cold with its decision, and History links to it', async () => {
    const decided = await file({ task_type: 'link-decided', proposed_action: 'Close ticket 77 (link test)' });
    await call(running.server.url, 'POST', `/reviews/${decided.id}/decide`, { decision_type: 'reject', reviewer_name: 'kim@example.com', notes: 'Still open upstream.' });

    const page = await open(decided.links.dashboard);
    const detail = page.locator('.review-page');
    await expect.poll(() => detail.textContent()).toContain('Close ticket 77 (link test)');
    expect(await detail.textContent()).toContain('kim@example.com');
    expect(await detail.textContent()).toContain('Still open upstream.');
    expect(await page.locator('.nav a[aria-current="page"]').textContent()).toBe('History');
    await page.screenshot({ path: path.join(SCREENSHOTS, 'review-page.png') });

    await page.getByRole('link', { name: '← History' }).click();
    const row = page.locator('.history tbody tr', { hasText: `link-decided #${decided.id}` });
    await row.getByRole('link', { name: `link-decided #${decided.id}` }).click();
    await expect.poll(() => hashOf(page)).toBe(`#/reviews/${decided.id}`);
    await expect.poll(() => page.locator('.review-page').textContent()).toContain('Close ticket 77 (link test)');
    await page.goBack();
    await expect.poll(() => page.locator('.history tbody tr', { hasText: `link-decided #${decided.id}` }).count()).toBe(1);
    await page.context().close();
  });

  it('covers the queue with the review on a narrow window, as one opened from the queue does', async () => {
    const review = await file({ task_type: 'link-narrow', proposed_action: 'Merge pull request 77 (narrow link)', urgency: 'low' });
    const page = await open(review.links.dashboard, true, { width: 420, height: 800 });
    await expect.poll(() => page.locator('.detail-pane').textContent()).toContain('Merge pull request 77 (narrow link)');
    expect(await page.locator('.detail-pane').isVisible()).toBe(true);
    expect(await page.locator('.queue-pane').isVisible()).toBe(false);
    await page.getByRole('button', { name: '← Queue' }).click();
    await expect.poll(() => page.locator('.queue-pane').isVisible()).toBe(true);
    await page.context().close();
  });

  it('says so when no review has the address', async () => {
    const page = await open(`${running.server.dashboardUrl}/#/reviews/987654`);
    await expect.poll(() => page.locator('.review-missing').textContent()).toContain('Review #987654 was not found');
    expect(await page.locator('.review-missing').getAttribute('role')).toBe('alert');
    await file({ task_type: 'link-missing', proposed_action: 'Something pending (missing link)' });
    await page.getByRole('link', { name: 'Go to the queue' }).click();
    await expect.poll(() => page.locator('.queue-pane').count()).toBe(1);
    // The queue opens its first review, and the address names it.
    await expect.poll(() => hashOf(page)).toMatch(/^#\/reviews\/\d+$/);
    const selected = await page.locator('.queue-list [aria-selected="true"]').getAttribute('id');
    expect(selected).toBe(`review-${hashOf(page).split('/')[2]}`);
    await page.context().close();
  });
});

describe('names', () => {
  it("shows an agent's agent_name in the queue, the detail and History", async () => {
    const named = await file({ task_type: 'link-named', proposed_action: 'Send the invoice reminder (named agent)', agent_name: 'billing-bot' });
    const page = await open(named.links.dashboard);
    await expect.poll(() => page.locator(`#review-${named.id} .agent-name`).textContent()).toBe('billing-bot');
    await expect.poll(() => page.locator('.facts').textContent()).toContain('billing-bot');
    expect(await page.locator('.timeline').textContent()).toContain('Requested by billing-bot');
    await call(running.server.url, 'POST', `/reviews/${named.id}/decide`, { decision_type: 'approve' });
    await page.getByRole('link', { name: 'History' }).click();
    const row = page.locator('.history tbody tr', { hasText: `link-named #${named.id}` });
    await expect.poll(() => row.locator('td').nth(2).textContent()).toBe('billing-bot');
    await page.context().close();
  });

  it("asks a reviewer's name once, before the first decision, and sends it with each", async () => {
    const one = await file({ task_type: 'link-name-prompt', proposed_action: 'First decision (name prompt)', urgency: 'critical' });
    const two = await file({ task_type: 'link-name-prompt', proposed_action: 'Second decision (name prompt)', urgency: 'critical' });
    const page = await open(one.links.dashboard, false);
    await expect.poll(() => page.locator('.detail-pane').textContent()).toContain('First decision (name prompt)');

    await page.getByRole('button', { name: /^Approve/ }).click();
    const prompt = page.getByRole('dialog', { name: 'Who is deciding?' });
    await expect.poll(() => prompt.isVisible()).toBe(true);
    await prompt.getByLabel('Your name or e-mail').fill('Robin Reviewer');
    await page.screenshot({ path: path.join(SCREENSHOTS, 'reviewer-name-prompt.png') });
    await prompt.getByRole('button', { name: 'Save and decide' }).click();
    await letUndoWindowPass(page);
    const decidedOne = async () => (await call(running.server.url, 'GET', `/reviews/${one.id}`)).body.decision;
    await expect.poll(async () => (await decidedOne())?.reviewer_name).toBe('Robin Reviewer');
    expect(await page.getByLabel('Reviewer', { exact: true }).inputValue()).toBe('Robin Reviewer');

    await page.locator(`#review-${two.id}`).click();
    await page.getByRole('button', { name: /^Reject/ }).click();
    await page.getByRole('dialog', { name: /Reject review/ }).getByRole('button', { name: 'Reject without a reason' }).click();
    expect(await prompt.isVisible()).toBe(false);
    await letUndoWindowPass(page);
    await expect.poll(async () => (await call(running.server.url, 'GET', `/reviews/${two.id}`)).body.decision?.reviewer_name).toBe('Robin Reviewer');
    await page.context().close();
  });
});
