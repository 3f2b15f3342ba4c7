import { describe, expect, it } from 'vitest';
import { letUndoWindowPass } from '../support/browser';
import { HOSTED_OPERATOR_KEY, hostedDashboardInBrowser } from '../support/hosted-dashboard';
import { call } from '../support/server';

/**
 * The hosted edition's reviews by their address, its registered agents by name, and its audit
 * log by names and links.
 */

const hosted = hostedDashboardInBrowser('greenlight-hosted-links-');
const { invite, acceptInvitation } = hosted;

describe('the hosted dashboard by name and address', () => {
  it("shows a registered agent's name in the queue and decides as the signed-in person, without asking a name", async () => {
    const { server, adminKey } = hosted;
    const agent = await call(server.url, 'POST', '/agents', { name: 'refund-bot' }, { headers: adminKey });
    const key = await call(server.url, 'POST', `/organizations/${agent.body.organization_id}/api-keys`, { name: 'refund-bot key', scope: 'agent', agent_id: agent.body.id }, { headers: adminKey });
    const review = await call(server.url, 'POST', '/reviews', { task_type: 'refund', proposed_action: 'Refund order 5001 (registered agent)', agent_name: 'not-its-name' }, { headers: { authorization: `Bearer ${key.body.key}` } });
    expect(review.body.agent_name).toBe('refund-bot');

    const page = await acceptInvitation(await invite('reviewer', 'Casey Reviewer'));
    await expect.poll(() => page.locator(`#review-${review.body.id} .agent-name`).textContent()).toBe('refund-bot');
    await page.locator(`#review-${review.body.id}`).click();
    await expect.poll(() => new URL(page.url()).hash).toBe(`#/reviews/${review.body.id}`);
    await page.getByRole('button', { name: /^Approve/ }).click();
    expect(await page.getByRole('dialog', { name: 'Who is deciding?' }).count()).toBe(0);
    await letUndoWindowPass(page);
    await expect.poll(async () => (await call(server.url, 'GET', `/reviews/${review.body.id}`, undefined, { headers: adminKey })).body.decision?.reviewer_name).toBe('Casey Reviewer');
    await page.context().close();
  });

  it("answers another organization's review address with not found", async () => {
    const { server } = hosted;
    const other = await call(server.url, 'POST', '/organizations', { name: 'Other Corp' }, { headers: { authorization: `Bearer ${HOSTED_OPERATOR_KEY}` } });
    const theirs = await call(server.url, 'POST', '/reviews', { task_type: 'payroll', proposed_action: 'Pay the salaries of Other Corp' }, { headers: { authorization: `Bearer ${other.body.api_key.key}` } });
    const page = await acceptInvitation(await invite('reviewer', 'Sam Curious'));
    await page.goto(`${server.dashboardUrl}/#/reviews/${theirs.body.id}`);
    await expect.poll(() => page.locator('.review-missing').textContent()).toContain(`Review #${theirs.body.id} was not found`);
    expect(await page.locator('body').textContent()).not.toContain('Pay the salaries');
    await page.context().close();
  });

  it('shows the audit log by names, each linked: people to the people page, a review to its address', async () => {
    const { server, adminKey } = hosted;
    const review = await call(server.url, 'POST', '/reviews', { task_type: 'audit-named', proposed_action: 'Grant access (audit names)' }, { headers: adminKey });
    const invited = await invite('reviewer', 'Nova Named');
    const admin = await acceptInvitation(await invite('admin', 'Avery Admin'));
    await admin.goto(`${server.dashboardUrl}/#/console/audit-log`);

    // The log's first page, or what shows instead: this once failed on a loaded CI machine as a bare "0 rows".
    const table = admin.locator('.audit-table');
    const loadError = admin.locator('.load-error');
    const shown = async (): Promise<string | null> =>
      (await loadError.count()) > 0 ? loadError.textContent() : (await table.count()) > 0 ? 'the log' : `nothing yet at ${new URL(admin.url()).hash}`;
    await expect.poll(shown).toBe('the log');
    const created = admin.getByRole('row', { name: new RegExp(`review\\.created.*Review #${review.body.id}`) });
    await expect.poll(async () => (await created.count()) || (await table.locator('tbody tr').allTextContents())).toBe(1);
    const reviewLink = created.getByRole('link', { name: `Review #${review.body.id} (audit-named)` });
    expect(await reviewLink.getAttribute('href')).toBe(`#/reviews/${review.body.id}`);
    expect(await created.getByRole('link', { name: /^API key “/ }).getAttribute('href')).toBe('#/console/api-keys');

    const userCreated = admin.getByRole('row', { name: /user\.created/ }).filter({ hasText: 'Nova Named' });
    await expect.poll(() => userCreated.count()).toBe(1);
    expect(await userCreated.getByRole('link', { name: 'Person “Nova Named”' }).getAttribute('href')).toBe('#/console/users');
    expect(invited.id).toBeGreaterThan(0);
    expect(await admin.locator('.audit-table').textContent()).not.toMatch(/(person|team|agent) #\d/);

    await reviewLink.click();
    await expect.poll(() => admin.locator('.detail-pane').textContent()).toContain('Grant access (audit names)');
    await admin.context().close();
  });
});
