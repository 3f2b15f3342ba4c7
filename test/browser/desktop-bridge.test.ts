import fs from 'node:fs';
import path from 'node:path';
import type { Page } from 'playwright';
import { describe, expect, it } from 'vitest';
import { dashboardInBrowser, reviewerContext } from '../support/browser';

/**
 * The dashboard as the desktop app shows it. Electron cannot run here, so the page gets a
 * stand-in for the preload bridge (`window.greenlight`) that records what the dashboard asks
 * of the shell; the Electron tests cover the real bridge where a binary exists.
 */
const running = dashboardInBrowser('greenlight-bridge-', (dir) => fs.mkdirSync(path.join(dir, 'data')));

interface BridgeRecord {
  calls: string[];
  openReview?: (id: number) => void;
  notifications: number;
}

async function openWithBridge(): Promise<Page> {
  const context = await reviewerContext(running.browser, { viewport: { width: 1280, height: 800 } });
  // Allowed and hidden: a plain browser tab would raise a notification for a critical review.
  await context.grantPermissions(['notifications'], { origin: running.server.dashboardUrl });
  const page = await context.newPage();
  await page.addInitScript(() => {
    Object.defineProperty(document, 'hidden', { get: () => true });
    const record: BridgeRecord = { calls: [], notifications: 0 };
    let settings = { notifications: 'critical', lanAccess: false, lanUrls: [] as string[], apiKey: null as string | null, slack: { botTokenSet: false, appTokenSet: false, channel: '' } };
    (window as unknown as { bridgeRecord: BridgeRecord }).bridgeRecord = record;
    const Original = window.Notification;
    window.Notification = class extends Original {
      constructor(title: string, options?: NotificationOptions) {
        super(title, options);
        record.notifications += 1;
      }
    } as typeof Notification;
    (window as unknown as { greenlight: unknown }).greenlight = {
      desktop: true,
      getApiKey: async () => {
        record.calls.push('getApiKey');
        return null;
      },
      getSettings: async () => {
        record.calls.push('getSettings');
        return settings;
      },
      updateSettings: async (change: Record<string, unknown>) => {
        record.calls.push(`updateSettings ${JSON.stringify(change)}`);
        const slack = change.slack as { botToken?: string; appToken?: string; channel?: string } | undefined;
        settings = { ...settings, ...change, slack: settings.slack };
        if (slack) {
          settings.slack = {
            botTokenSet: slack.botToken === undefined ? settings.slack.botTokenSet : slack.botToken !== '',
            appTokenSet: slack.appToken === undefined ? settings.slack.appTokenSet : slack.appToken !== '',
            channel: slack.channel ?? settings.slack.channel,
          };
        }
        if (change.lanAccess === true) settings = { ...settings, lanUrls: ['http://192.168.1.20:8000'], apiKey: 'lan-key-0123456789abcdef' };
        return settings;
      },
      copyApiKey: async () => {
        record.calls.push('copyApiKey');
      },
      onOpenReview: (listener: (id: number) => void) => {
        record.openReview = listener;
      },
    };
  });
  await page.goto(running.server.dashboardUrl!);
  await expect.poll(() => page.locator('.live').textContent()).toBe('Live');
  return page;
}

const record = (page: Page) => page.evaluate(() => (window as unknown as { bridgeRecord: BridgeRecord }).bridgeRecord);

describe('the dashboard inside the desktop app', () => {
  it('takes its API key from the shell instead of asking', async () => {
    const page = await openWithBridge();
    expect((await record(page)).calls).toContain('getApiKey');
    expect(await page.getByRole('dialog', { name: /needs an API key/ }).isVisible()).toBe(false);
    await page.context().close();
  });

  it('changes notification and LAN settings through the bridge, showing the key to copy', async () => {
    const page = await openWithBridge();
    await page.getByRole('button', { name: 'Desktop settings' }).click();
    await page.getByLabel('Critical and high-urgency reviews').check();
    await page.getByLabel('Allow agents on the local network to reach the API').check();
    await expect.poll(() => page.locator('.api-key').textContent()).toBe('lan-key-0123456789abcdef');
    expect(await page.locator('.lan-urls').textContent()).toContain('http://192.168.1.20:8000');
    await page.getByRole('button', { name: 'Copy key' }).click();
    await expect.poll(() => page.getByRole('button', { name: 'Copied' }).count()).toBe(1);
    expect((await record(page)).calls).toEqual(
      expect.arrayContaining([
        'getSettings',
        'updateSettings {"notifications":"critical_and_high"}',
        'updateSettings {"lanAccess":true}',
        'copyApiKey',
      ]),
    );
    await page.context().close();
  });

  it('sets up Slack over Socket Mode: tokens go to the shell, and only whether they are set comes back', async () => {
    const page = await openWithBridge();
    await page.getByRole('button', { name: 'Desktop settings' }).click();
    await page.getByLabel('Bot token').fill('xoxb-1-2-secret');
    await page.getByLabel('App-level token').fill('xapp-1-A1-secret');
    await page.getByLabel('Channel id').fill('C0REVIEWS');
    await page.getByRole('button', { name: 'Save Slack settings' }).click();
    await expect.poll(() => page.locator('.slack-status').textContent()).toContain('New reviews are posted to C0REVIEWS');
    expect(await page.getByLabel('Bot token').inputValue()).toBe('');
    expect(await page.getByLabel('Bot token').getAttribute('placeholder')).toBe('set (type a new one to replace it)');
    expect((await record(page)).calls).toContain('updateSettings {"slack":{"botToken":"xoxb-1-2-secret","appToken":"xapp-1-A1-secret","channel":"C0REVIEWS"}}');
    await expect.poll(() => page.getByRole('button', { name: 'Save Slack settings' }).isEnabled()).toBe(true);
    await page.getByRole('dialog').screenshot({ path: path.join(__dirname, '..', '..', 'docs', 'screenshots', 'desktop-slack-settings.png') });
    await page.getByRole('button', { name: 'Disconnect Slack' }).click();
    await expect.poll(() => page.locator('.slack-status').count()).toBe(0);
    expect((await record(page)).calls).toContain('updateSettings {"slack":{"botToken":"","appToken":"","channel":""}}');
    await page.context().close();
  });

  it('opens the review a native notification was clicked for, and leaves notifications to the shell', async () => {
    const page = await openWithBridge();
    const response = await fetch(`${running.server.url}/reviews`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ task_type: 'bridge-open', proposed_action: 'Approve the vendor invoice', urgency: 'critical' }),
    });
    const review = (await response.json()) as { id: number };
    await page.getByRole('link', { name: 'Statistics' }).click();
    await page.evaluate((id) => (window as unknown as { bridgeRecord: BridgeRecord }).bridgeRecord.openReview?.(id), review.id);
    await expect.poll(() => page.locator('.detail-head h2').textContent()).toBe(`bridge-open #${review.id}`);
    expect((await record(page)).notifications).toBe(0);
    await page.context().close();
  });
});
