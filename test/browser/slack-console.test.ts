import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { axeViolations } from '../support/browser';
import { hostedDashboardInBrowser, SCREENSHOTS } from '../support/hosted-dashboard';
import { call } from '../support/server';
import { FakeSlack } from '../support/slack';

/** The console's Slack page (hosted edition): Add to Slack through a fake Slack that authorizes at once, the channel, disconnect. */
let slack: FakeSlack;
beforeAll(async () => {
  slack = await FakeSlack.start();
});
afterAll(() => slack?.stop());

const hosted = hostedDashboardInBrowser('greenlight-slack-console-', () => ({
  GREENLIGHT_SLACK_API_URL: slack.apiUrl,
  GREENLIGHT_SLACK_OAUTH_URL: slack.authorizeUrl,
  GREENLIGHT_SLACK_CLIENT_ID: slack.options.clientId,
  GREENLIGHT_SLACK_CLIENT_SECRET: slack.options.clientSecret,
  GREENLIGHT_SLACK_TOKEN_KEY: randomBytes(32).toString('base64'),
}));

describe('the console\'s Slack page', () => {
  it('adds Slack through OAuth, picks the channel, and disconnects', async () => {
    const admin = await hosted.invite('admin', 'Slack Admin');
    const page = await hosted.acceptInvitation(admin, { bypassCSP: true });
    await page.getByRole('link', { name: 'Console' }).click();
    await page.locator('.console-nav').getByRole('link', { name: 'Slack' }).click();
    await expect.poll(() => page.getByText('Slack is not connected.').count()).toBe(1);
    await page.getByRole('button', { name: 'Add to Slack' }).click();
    // Slack (the fake) authorizes and sends the browser back through the API's callback to the console.
    await expect.poll(() => page.locator('.slack-facts').textContent(), { timeout: 15_000 }).toContain('Fake Team');
    expect(page.url()).toMatch(/#\/console\/slack$/);
    await page.getByLabel('Channel for new reviews').fill('C0REVIEWS');
    await page.getByRole('button', { name: 'Save channel' }).click();
    await expect.poll(() => page.locator('.slack-installation [role=status]').textContent()).toBe('New reviews go to C0REVIEWS.');
    expect(await axeViolations(page)).toEqual([]);
    await page.locator('.console-body').screenshot({ path: path.join(SCREENSHOTS, 'console-slack.png') });
    const review = await call(hosted.server.url, 'POST', '/reviews', { task_type: 'refund', proposed_action: 'Refund order 77' }, { headers: hosted.adminKey });
    await expect.poll(() => slack.messages.some((m) => m.channel === 'C0REVIEWS' && m.text.includes(`#${review.body.id}:`))).toBe(true);
    await page.getByRole('button', { name: 'Disconnect Slack' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Disconnect' }).click();
    await expect.poll(() => page.getByText('Slack is not connected.').count()).toBe(1);
    expect(slack.revoked.size).toBe(1);
    // A person linked to their Slack user by hand, from the Users page.
    await page.locator('.console-nav').getByRole('link', { name: 'Users' }).click();
    const link = page.getByLabel(/^Slack member id of Slack Admin/);
    await link.fill('U0ADMIN');
    await link.press('Enter');
    await expect.poll(async () => (await call(hosted.server.url, 'GET', `/users/${admin.id}`, undefined, { headers: hosted.adminKey })).body.slack_user_id).toBe('U0ADMIN');
    await page.context().close();
  });
});
