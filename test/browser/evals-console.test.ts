import path from 'node:path';
import type { Page } from 'playwright';
import { describe, expect, it } from 'vitest';
import { axeViolations } from '../support/browser';
import { hostedDashboardInBrowser, SCREENSHOTS } from '../support/hosted-dashboard';
import { call } from '../support/server';

/**
 * The console's evaluation suites in Chromium (hosted edition): a suite made and run from the
 * page, its reliability diagram and coverage curve, the suggested rule created as a shadow rule,
 * and that rule's agreement so far and Enforce on the routing rules page.
 */

const hosted = hostedDashboardInBrowser('greenlight-evals-console-');

async function consoleSection(page: Page, section: string): Promise<void> {
  await page.getByRole('link', { name: 'Console' }).click();
  await page.locator('.console-nav').getByRole('link', { name: section }).click();
  await expect.poll(() => page.getByRole('heading', { level: 2, name: section }).count()).toBe(1);
}

/** Files a review as the agent would and has `reviewerId` decide it through the admin key. */
async function decided(confidence: number, reviewerId: number, decision: Record<string, unknown>, taskType = 'refund'): Promise<number> {
  const created = await call(hosted.server.url, 'POST', '/reviews', { task_type: taskType, proposed_action: 'Refund order 1042 in full (EUR 48.00)', confidence_score: confidence }, { headers: hosted.adminKey });
  expect(created.status).toBe(201);
  if (Object.keys(decision).length > 0) {
    const answer = await call(hosted.server.url, 'POST', `/reviews/${created.body.id}/decide`, { ...decision, reviewer_id: reviewerId }, { headers: hosted.adminKey });
    expect(answer.status).toBe(200);
  }
  return created.body.id;
}

describe('evaluation suites in the console', () => {
  it('runs a suite, draws its calibration and coverage, and turns its suggestion into a shadow rule that can be enforced', async () => {
    const rita = await hosted.invite('reviewer', 'Rita Reviewer');
    // A record an evaluation can stand on: confident proposals nearly always approved, less confident ones often not.
    for (let i = 0; i < 70; i += 1) await decided(0.9 + (i % 10) / 100, rita.id, { decision_type: 'approve' });
    for (let i = 0; i < 12; i += 1) await decided(0.8 + (i % 10) / 100, rita.id, { decision_type: i % 4 === 0 ? 'reject' : 'approve' });
    for (let i = 0; i < 16; i += 1) await decided(0.3 + (i % 40) / 100, rita.id, i % 2 === 0 ? { decision_type: 'reject' } : { decision_type: 'modify', modified_action: `Refund order 1042 in part (EUR ${20 + i}.00)` });

    // axe-core is injected as a script, which the dashboard's Content-Security-Policy would refuse.
    const page = await hosted.acceptInvitation(await hosted.invite('admin', 'Eve Evaluator'), { bypassCSP: true });
    await consoleSection(page, 'Evals');
    const form = page.getByRole('form', { name: 'Create an evaluation suite' });
    await form.getByLabel('Suite name').fill('Refunds');
    await form.getByLabel('Task types (optional, comma-separated)').fill('refund');
    await form.getByLabel('Runs').selectOption('weekly');
    await form.getByRole('button', { name: 'Create suite' }).click();
    const suites = page.getByRole('region', { name: 'Evaluation suites' });
    await expect.poll(() => suites.getByRole('row', { name: /Refunds/ }).textContent()).toContain('weekly');

    await suites.getByRole('row', { name: /Refunds/ }).getByRole('button', { name: 'Run now' }).click();
    const suggested = page.getByRole('region', { name: 'Suggested rule' });
    await expect.poll(() => suggested.getByRole('heading').textContent(), { timeout: 20_000 }).toBe('Suggested rule: A rule it can stand behind');
    expect(await suggested.textContent()).toContain('With 95 % confidence, at least 95 % of the reviews with a confidence of 0.9 or more would have been approved as proposed');
    expect(await page.getByRole('img', { name: /^Reliability diagram\. .*Confidence 0\.9 to 1: 70 reviews, mean confidence 0\.945, 100 % approved/ }).count()).toBe(1);
    expect(await page.getByRole('img', { name: /^Coverage and precision by threshold, target 0\.95\. .*At 0\.9: 71 % of reviews, 100 % approved as proposed/ }).count()).toBe(1);
    expect(await page.getByRole('region', { name: 'Time to decision' }).textContent()).toContain('Median');
    expect(await page.getByRole('region', { name: 'Reviewer agreement' }).textContent()).toContain('No review had two votes');
    expect(await axeViolations(page)).toEqual([]);
    await page.setViewportSize({ width: 1280, height: 1800 });
    await page.locator('.console-body').evaluate((body) => body.scrollTo(0, 0));
    await page.screenshot({ path: path.join(SCREENSHOTS, 'hosted-console-evals.png') });
    await page.setViewportSize({ width: 1280, height: 800 });

    await suggested.getByRole('button', { name: 'Create as shadow rule' }).click();
    await expect.poll(() => suggested.getByRole('status').textContent()).toContain('Created the shadow rule “Auto-approve: Refunds at confidence ≥ 0.9”');
    const rules = (await call(hosted.server.url, 'GET', '/routing-rules', undefined, { headers: hosted.adminKey })).body.routing_rules;
    expect(rules).toMatchObject([{ name: 'Auto-approve: Refunds at confidence ≥ 0.9', mode: 'shadow', action: { auto_decide: 'approve' }, conditions: { confidence_score: { operator: '>=', value: 0.9 }, task_type: { operator: 'in', value: ['refund'] } } }]);

    // The shadow rule marks a new confident refund; Rita approves it.
    const marked = await decided(0.97, rita.id, { decision_type: 'approve' });
    expect((await call(hosted.server.url, 'GET', `/reviews/${marked}`, undefined, { headers: hosted.adminKey })).body.shadow_rule_id).toBe(rules[0].id);
    await suggested.getByRole('link', { name: 'Routing rules' }).click();
    await expect.poll(() => page.getByRole('heading', { level: 2, name: 'Routing rules' }).count()).toBe(1);
    const row = page.getByRole('region', { name: /Routing rules, in the order/ }).getByRole('row', { name: /Auto-approve: Refunds/ });
    await expect.poll(() => row.textContent()).toContain('Auto-approves in shadow');
    expect(await row.textContent()).toContain('People agreed on 1 of 1 (100 %; at least 5 % with 95 % confidence).');
    await row.getByRole('button', { name: 'Enforce' }).click();
    await expect.poll(() => row.textContent()).toContain('Auto-approves; 5 % still go to a person');
    expect(await row.getByRole('button', { name: 'Enforce' }).count()).toBe(0);
    expect((await call(hosted.server.url, 'GET', `/routing-rules/${rules[0].id}`, undefined, { headers: hosted.adminKey })).body.mode).toBe('enforce');
  });
});
