import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { dashboardInBrowser, reviewerContext } from '../support/browser';
import { call } from '../support/server';

const SCREENSHOTS = path.resolve(__dirname, '..', '..', 'docs', 'screenshots');

const running = dashboardInBrowser('greenlight-policy-ui-', (dir) =>
  fs.writeFileSync(
    path.join(dir, 'greenlight.yaml'),
    [
      'routing:',
      '  rules:',
      '    - name: refunds-to-dana',
      '      priority: 5',
      '      conditions: { task_type: refund }',
      '      assign_to: dana@example.com',
      '      assign_to_team: finance',
      '  default_reviewers: [sam@example.com]',
      '  expiry: { high: 1h, critical: 4m }',
      '',
    ].join('\n'),
  ),
);

describe('the review policy in the dashboard', () => {
  it('shows assignee, rule and time left, and filters to the reviewer\'s own reviews', async () => {
    const { server, browser } = running;
    await call(server.url, 'POST', '/reviews', { task_type: 'refund', proposed_action: 'Refund order 1042 in full', urgency: 'high' });
    await call(server.url, 'POST', '/reviews', { task_type: 'email', proposed_action: 'Send the outage e-mail to all customers', urgency: 'critical' });

    const context = await reviewerContext(browser, { viewport: { width: 1280, height: 800 } });
    await context.addInitScript(() => window.localStorage.setItem('greenlight.reviewerName', 'dana@example.com'));
    const page = await context.newPage();
    await page.goto(server.dashboardUrl!);
    await expect.poll(() => page.locator('.queue-item').count()).toBe(2);

    const critical = page.locator('.queue-item', { hasText: 'outage' });
    await expect.poll(() => critical.locator('.meta').textContent()).toMatch(/→ sam@example\.com.*[34]m \d+s left|→ sam@example\.com.*[34]m left/);
    expect(await critical.locator('.expiry').getAttribute('class')).toContain('soon');

    await page.getByRole('checkbox', { name: 'Mine' }).check();
    await expect.poll(() => page.locator('.queue-item .action').allTextContents()).toEqual(['Refund order 1042 in full']);
    await page.locator('.queue-item').first().dblclick();
    const details = page.locator('.facts');
    await expect.poll(() => details.textContent()).toContain('dana@example.com (team finance)');
    expect(await details.textContent()).toContain('rule refunds-to-dana');
    expect(await details.textContent()).toMatch(/Expires(59m|1h 0m) left/);
    expect(await details.textContent()).toContain('Confidencenot given');
    await page.screenshot({ path: path.join(SCREENSHOTS, 'policy.png') });

    await page.getByRole('checkbox', { name: 'Mine' }).uncheck();
    await expect.poll(() => page.locator('.queue-item').count()).toBe(2);
    await context.close();
  });
});
