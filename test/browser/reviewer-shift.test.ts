import fs from 'node:fs';
import path from 'node:path';
import type { Locator, Page } from 'playwright';
import { describe, expect, it } from 'vitest';
import { axeViolations, dashboardInBrowser, letUndoWindowPass, openLiveDashboard } from '../support/browser';
import { startWithDashboard, stopProgram } from '../support/cli';
import { call } from '../support/server';
import { makeTempDir } from '../support/temp';

/** Where the screenshots the docs show are written. */
const SCREENSHOTS = path.resolve(__dirname, '..', '..', 'docs', 'screenshots');

const running = dashboardInBrowser('greenlight-reviewer-shift-');
const api = (): string => running.server.url;

/** The dashboard at 1440×900 unless told otherwise: the size the queue is held to. */
function openDashboard(options: { width?: number; height?: number; bypassCSP?: boolean } = {}, server = running.server): Promise<Page> {
  return openLiveDashboard(running.browser, server.dashboardUrl!, { width: 1440, height: 900, ...options });
}

async function create(body: Record<string, unknown>, base = api()): Promise<{ id: number }> {
  const created = await call(base, 'POST', '/reviews', { urgency: 'medium', ...body });
  expect(created.status).toBe(201);
  return created.body;
}

/** An agent's blocking create, held until `agent.abort()` or a decision. */
function agentWaiting(body: Record<string, unknown>, seconds: number, base = api()): { done: Promise<unknown>; abort: () => void } {
  const controller = new AbortController();
  const done = fetch(`${base}/reviews`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', prefer: `wait=${seconds}` },
    body: JSON.stringify({ urgency: 'medium', ...body, blocking: true }),
    signal: controller.signal,
  }).catch(() => undefined);
  return { done, abort: () => controller.abort() };
}

async function reviewOf(id: number): Promise<any> {
  return (await call(api(), 'GET', `/reviews/${id}`)).body;
}

/** The id of the one review whose action contains `text`, once it exists. */
async function idOf(text: string, base = api()): Promise<number> {
  let id: number | undefined;
  await expect.poll(async () => (id = (await call(base, 'GET', `/reviews?q=${encodeURIComponent(text)}`)).body.reviews[0]?.id)).toBeDefined();
  return id!;
}

const focused = (page: Page): Promise<string> => page.evaluate(() => {
  const element = document.activeElement as HTMLElement | null;
  return element ? `${element.tagName.toLowerCase()}${element.id ? `#${element.id}` : ''} ${element.textContent?.trim().slice(0, 40) ?? ''}`.trim() : '';
});

type Box = { x: number; y: number; width: number; height: number };
const overlap = (a: Box, b: Box): boolean => a.x < b.x + b.width && b.x < a.x + a.width && a.y < b.y + b.height && b.y < a.y + a.height;

/** Queue rows wholly inside both the window and the list's own visible area. */
async function rowsInView(page: Page): Promise<number> {
  return page.evaluate(() => {
    const list = document.getElementById('queue-list')!.getBoundingClientRect();
    const bottom = Math.min(list.bottom, window.innerHeight);
    return [...document.querySelectorAll('.queue-item')].filter((row) => {
      const box = row.getBoundingClientRect();
      return box.top >= list.top - 0.5 && box.bottom <= bottom + 0.5;
    }).length;
  });
}

function clippedTo(box: Box, clip: Box): Box | null {
  const x = Math.max(box.x, clip.x);
  const y = Math.max(box.y, clip.y);
  const right = Math.min(box.x + box.width, clip.x + clip.width);
  const bottom = Math.min(box.y + box.height, clip.y + clip.height);
  return right > x && bottom > y ? { x, y, width: right - x, height: bottom - y } : null;
}

async function boxesOf(rows: Locator): Promise<Box[]> {
  const boxes: Box[] = [];
  for (const row of await rows.all()) {
    const box = await row.boundingBox();
    if (box) boxes.push(box);
  }
  return boxes;
}

describe('the agents who are waiting', () => {
  it('badges the reviews agents wait on, counts them in the header, filters and sorts by them, and drops the badge live when the agent goes', async () => {
    const token = `waits-${Date.now()}`;
    await create({ task_type: 'idle', proposed_action: `Nobody waits on this (${token})`, urgency: 'critical' });
    const patient = agentWaiting({ task_type: 'patient', proposed_action: `Rotate the database password (${token})` }, 280);
    const hurried = agentWaiting({ task_type: 'hurried', proposed_action: `Refund order 77 (${token})` }, 100);
    const [patientId, hurriedId] = [await idOf(`Rotate the database password (${token})`), await idOf(`Refund order 77 (${token})`)];
    await expect.poll(async () => (await reviewOf(patientId)).waiting_until !== null && (await reviewOf(hurriedId)).waiting_until !== null).toBe(true);

    const page = await openDashboard();
    await page.getByLabel('Search in actions').fill(token);
    await expect.poll(() => page.locator('.queue-item').count()).toBe(3);
    const badge = (id: number) => page.locator(`#review-${id} .agent-waiting`);
    await expect.poll(() => badge(patientId).textContent()).toMatch(/^Agent waiting · gives up in 4m$/);
    await expect.poll(() => badge(hurriedId).textContent()).toMatch(/^Agent waiting · gives up in 1m$/);
    expect(await page.locator('.queue-item .agent-waiting').count()).toBe(2);
    // The review's age says it is an age.
    expect(await page.locator(`#review-${patientId} .age`).textContent()).toMatch(/^\d+s ago$/);
    await expect.poll(() => page.locator('.waiting-agents').textContent()).toMatch(/Agents waiting on 2 reviews/);

    // The countdown runs on the page's clock.
    await page.clock.fastForward(61_000);
    await expect.poll(() => badge(hurriedId).textContent()).toMatch(/^Agent waiting · gives up in \d+s$/);

    // Sorted by who gives up soonest: the hurried agent, the patient one, then the critical review nobody waits on.
    await page.getByRole('combobox', { name: 'Order' }).selectOption('waiting_until');
    await expect.poll(() => page.locator('.queue-item .task').allTextContents()).toEqual(['hurried', 'patient', 'idle']);

    // Only the waited-on, by the filter in the panel.
    await page.getByRole('button', { name: /^Filters/ }).click();
    await page.getByRole('checkbox', { name: 'Agent waiting' }).check();
    await expect.poll(() => page.locator('.filter-chips .chip').allTextContents()).toEqual(['Agent waiting', `Search: “${token}”`]);
    await expect.poll(() => page.locator('.queue-item .task').allTextContents()).toEqual(['hurried', 'patient']);

    await page.locator(`#review-${patientId}`).click();
    await expect.poll(() => page.locator('.detail-head .agent-waiting').textContent()).toMatch(/^Agent waiting · gives up in \d+m$/);
    expect(await page.locator('.detail-head .age').textContent()).toMatch(/^opened \d+(s|m) ago$/);
    await page.screenshot({ path: path.join(SCREENSHOTS, 'agents-waiting.png') });

    // The agent goes away: the server says so live, and the badge, the row and the count follow.
    patient.abort();
    await patient.done;
    await expect.poll(() => page.locator('.queue-item .task').allTextContents()).toEqual(['hurried']);
    await expect.poll(() => page.locator('.waiting-agents').textContent()).toMatch(/Agents waiting on 1 review$/);

    // The header's count opens the queue on the waited-on reviews, soonest to give up first.
    await page.getByRole('button', { name: 'Remove the filter Agent waiting' }).click();
    await page.getByRole('button', { name: `Remove the filter Search: “${token}”` }).click();
    await page.locator('.waiting-agents').click();
    await expect.poll(() => page.locator('.filter-chips .chip').allTextContents()).toEqual(['Agent waiting']);
    await expect.poll(() => page.locator('.queue-item .task').allTextContents()).toEqual(['hurried']);

    hurried.abort();
    await hurried.done;
    await expect.poll(() => page.locator('.waiting-agents').count()).toBe(0);
    await page.context().close();
  });
});

describe('a keyboard loop through the queue', () => {
  it('searches, opens, approves, modifies with Ctrl+Enter and rejects with a reason without the mouse; the decisions reach the API', async () => {
    const token = `keyboard-${Date.now()}`;
    const approveMe = await create({ task_type: 'kb-approve', proposed_action: `Close ticket 1 (${token})`, urgency: 'high' });
    const modifyMe = await create({ task_type: 'kb-modify', proposed_action: `Refund EUR 250 (${token})`, urgency: 'high' });
    const rejectMe = await create({ task_type: 'kb-reject', proposed_action: `Drop table users (${token})`, urgency: 'high' });
    const page = await openDashboard();
    await page.locator('header .reviewer input').fill('kim@example.com');
    await page.locator('header .reviewer input').press('Tab');
    // From a page just loaded (the name is kept), as a reviewer starts.
    await page.reload();
    await expect.poll(() => page.locator('.queue-item').count()).toBeGreaterThanOrEqual(3);

    // The first Tab stop skips the header and the filters.
    await page.keyboard.press('Tab');
    expect(await focused(page)).toBe('button Skip to the reviews');
    await page.keyboard.press('Enter');
    await expect.poll(() => focused(page)).toMatch(/^div#queue-list/);

    // `/` searches; Esc leaves the box with the search kept, so keys act on the list again.
    await page.keyboard.press('/');
    expect(await focused(page)).toMatch(/^input/);
    await page.keyboard.type(token);
    await page.keyboard.press('Escape');
    await expect.poll(() => focused(page)).toMatch(/^div#queue-list/);
    expect(await page.getByLabel('Search in actions').inputValue()).toBe(token);
    await expect.poll(() => page.locator('.queue-item').count()).toBe(3);
    await page.keyboard.press('j');
    expect(await page.getByLabel('Search in actions').inputValue()).toBe(token);

    // Enter in the search goes to the first result and opens it.
    await page.keyboard.press('/');
    await page.keyboard.press('Enter');
    await expect.poll(() => focused(page)).toMatch(/^div#queue-list/);
    await expect.poll(() => page.locator('.detail-head h2').textContent()).toContain(`#${approveMe.id}`);

    await page.keyboard.press('a');
    await page.keyboard.press('Enter');
    await expect.poll(() => page.locator('.detail-head h2').textContent()).toContain(`#${modifyMe.id}`);

    await page.keyboard.press('m');
    const editor = page.locator(`#modified-${modifyMe.id}`);
    await expect.poll(() => editor.evaluate((field) => field === document.activeElement)).toBe(true);
    await page.keyboard.press('ControlOrMeta+a');
    await page.keyboard.type(`Refund EUR 125 (${token})`);
    await page.keyboard.press('ControlOrMeta+Enter');
    await expect.poll(() => page.locator('.detail-head h2').textContent()).toContain(`#${rejectMe.id}`);

    await page.keyboard.press('r');
    await page.keyboard.press('Enter');
    const reason = page.locator(`#reject-reason-${rejectMe.id}`);
    await expect.poll(() => reason.evaluate((field) => field === document.activeElement)).toBe(true);
    await page.keyboard.type('Never on production');
    await page.keyboard.press('Enter');
    await expect.poll(() => page.locator('.queue-item').count()).toBe(0);

    await letUndoWindowPass(page);
    await expect.poll(async () => (await reviewOf(rejectMe.id)).status).toBe('rejected');
    expect((await reviewOf(approveMe.id)).decision).toMatchObject({ decision_type: 'approve', reviewer_name: 'kim@example.com' });
    expect((await reviewOf(modifyMe.id)).decision).toMatchObject({ decision_type: 'modify', modified_action: `Refund EUR 125 (${token})` });
    expect((await reviewOf(rejectMe.id)).decision).toMatchObject({ decision_type: 'reject', notes: 'Never on production' });
    await page.context().close();
  });
});

describe('a denser queue', () => {
  it('shows at least 12 reviews at 1440×900 under a one-line filter bar, and the undo toasts cover none of them', async () => {
    fs.mkdirSync(SCREENSHOTS, { recursive: true });
    // A Greenlight of its own: the queue as a reviewer finds it, with no search to isolate it.
    const dir = makeTempDir('greenlight-dense-queue-');
    const fresh = await startWithDashboard(dir.dir);
    try {
      const actions = [
        'Refund order 1042 in full (EUR 250.00)',
        "UPDATE customers SET tier = 'gold' WHERE lifetime_value > 10000",
        'Send the renewal reminder to 1,204 customers',
        'Scale the api deployment from 6 to 12 replicas',
        'Delete 312 tickets closed before 2024',
        'Reply to Dana: "Your replacement ships Monday"',
        'Rotate the signing key of the billing service',
        'Grant read access on bucket exports to vendor-7',
        'Cancel subscription 88213 at the end of the term',
        'Merge pull request 4411 into main',
        'Pause the spring campaign in region EU',
        'Issue a EUR 40 goodwill credit to account 5512',
        'Re-run the failed payroll export for October',
        'Archive the 2019 audit folder',
        'Open incident INC-2207 with severity 2',
        'Email the weekly digest to the leadership list',
      ];
      for (const [index, action] of actions.entries()) {
        await create({ task_type: ['refund', 'sql', 'email', 'infra'][index % 4], proposed_action: action, urgency: ['critical', 'high', 'medium', 'low'][index % 4], confidence_score: 0.5 + (index % 5) / 10, framework: 'langgraph' }, fresh.url);
      }
      const waiting = agentWaiting({ task_type: 'refund', proposed_action: 'Refund order 2210 (EUR 1,900.00)', urgency: 'high' }, 240, fresh.url);
      await idOf('Refund order 2210', fresh.url);

      const page = await openDashboard({ width: 1440, height: 900 }, fresh);
      await expect.poll(() => page.locator('.queue-item').count()).toBeGreaterThanOrEqual(12);
      await expect.poll(() => page.locator('.queue-item .agent-waiting').count()).toBe(1);
      // The header's counts read, as the reviewer sees them once the page has settled.
      await expect.poll(() => page.locator('.nav .count').textContent()).toBe('17');
      await expect.poll(() => page.locator('.waiting-agents').textContent()).toMatch(/Agents waiting on 1 review$/);
      expect(await rowsInView(page)).toBeGreaterThanOrEqual(12);
      // The filters fold into one line above the chips: the full set is one click away.
      const bar = (await page.locator('.filter-bar').boundingBox())!;
      expect(bar.height).toBeLessThan(48);
      expect(await page.locator('#filter-panel').isVisible()).toBe(false);
      await page.screenshot({ path: path.join(SCREENSHOTS, 'queue-busy.png') });

      // Two decisions held for Undo: their toasts sit below the list, over none of its rows.
      await page.locator('.queue-list').focus();
      for (let decided = 0; decided < 2; decided++) {
        await page.keyboard.press('a');
        await page.keyboard.press('Enter');
      }
      await expect.poll(() => page.locator('.toast.held').count()).toBe(2);
      const toasts = (await page.locator('.toasts').boundingBox())!;
      const list = (await page.locator('#queue-list').boundingBox())!;
      // What shows of each row: the list clips the one cut by its foot.
      const rows = (await boxesOf(page.locator('.queue-item'))).map((box) => clippedTo(box, list)).filter((box) => box !== null);
      expect(rows.length).toBeGreaterThanOrEqual(10);
      for (const row of rows) expect(overlap(toasts, row), 'a toast covers a queue row').toBe(false);
      expect(overlap(toasts, list)).toBe(false);
      expect(await rowsInView(page)).toBeGreaterThanOrEqual(10);
      await page.screenshot({ path: path.join(SCREENSHOTS, 'undo-toast-docked.png') });
      await page.getByRole('button', { name: /^Undo/ }).first().click();
      await page.getByRole('button', { name: /^Undo/ }).first().click();
      await expect.poll(() => page.locator('.toast.held').count()).toBe(0);

      waiting.abort();
      await waiting.done;
      await page.context().close();
    } finally {
      await stopProgram(fresh);
      dir.remove();
    }
  });

  it('has no axe-core violations with the filters open, a chip and an agent waiting', async () => {
    const token = `axe-${Date.now()}`;
    const waiting = agentWaiting({ task_type: 'refund', proposed_action: `Refund order 9 (${token})` }, 200);
    await idOf(`Refund order 9 (${token})`);
    const page = await openDashboard({ bypassCSP: true });
    await page.getByLabel('Search in actions').fill(token);
    await expect.poll(() => page.locator('.queue-item .agent-waiting').count()).toBe(1);
    await page.getByRole('button', { name: /^Filters/ }).click();
    await expect.poll(() => page.locator('.waiting-agents').count()).toBe(1);
    expect(await axeViolations(page)).toEqual([]);
    waiting.abort();
    await waiting.done;
    await page.context().close();
  });
});
