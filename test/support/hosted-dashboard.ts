import fs from 'node:fs';
import path from 'node:path';
import type { Browser, BrowserContextOptions, Page } from 'playwright';
import { afterAll, beforeAll, expect } from 'vitest';
import { launchChromium } from './browser';
import { type RunningCli, startWithDashboard, stopProgram } from './cli';
import { call } from './server';
import { makeTempDir } from './temp';

export const SCREENSHOTS = path.resolve(__dirname, '..', '..', 'docs', 'screenshots');
export const HOSTED_OPERATOR_KEY = 'operator-key-for-browser-tests-0123456789';
export const HOSTED_PASSWORD = 'correct horse battery staple';

export interface Invited {
  id: number;
  email: string;
  name: string;
  invitationUrl: string;
}

/** The hosted edition under test: `greenlight start`, Chromium, and an organization ("Acme Support") with its admin key. */
export interface HostedDashboard {
  server: RunningCli;
  browser: Browser;
  /** Acme Support's first admin key, as request headers. */
  adminKey: Record<string, string>;
  /** A person invited by an admin key (Acme Support's unless another is given). */
  invite(role: 'admin' | 'reviewer' | 'viewer', name: string, organizationKey?: Record<string, string>): Promise<Invited>;
  /** A page of its own (a context with the clock installed, so a test can move it past an undo window). */
  newPage(options?: BrowserContextOptions): Promise<Page>;
  /** Follows an invitation link and sets the password; the person lands in the queue, signed in. */
  acceptInvitation(invited: Invited, options?: BrowserContextOptions): Promise<Page>;
  signIn(invited: Invited): Promise<Page>;
}

/**
 * Registers hooks that start the hosted edition (webhooks may reach a receiver on loopback over
 * http) and Chromium, and make Acme Support; all of it ends with the file.
 */
export function hostedDashboardInBrowser(prefix: string, env: () => NodeJS.ProcessEnv = () => ({})): HostedDashboard {
  let temp: ReturnType<typeof makeTempDir> | undefined;
  const hosted = {
    async invite(role, name, organizationKey = hosted.adminKey) {
      const email = `${name.toLowerCase().replace(/\W+/g, '.')}@acme.example`;
      const invited = await call(hosted.server.url, 'POST', '/users', { email, name, role }, { headers: organizationKey });
      expect(invited.status).toBe(201);
      return { id: invited.body.id, email, name, invitationUrl: invited.body.invitation_url };
    },
    async newPage(options = {}) {
      const context = await hosted.browser.newContext({ viewport: { width: 1280, height: 800 }, ...options });
      // Time runs as usual on the page, and a test moves it on past a decision's undo window.
      await context.clock.install();
      const page = await context.newPage();
      page.on('pageerror', (error) => {
        throw error;
      });
      return page;
    },
    async acceptInvitation(invited, options) {
      const page = await hosted.newPage(options);
      await page.goto(invited.invitationUrl);
      await expect.poll(() => page.locator('.account-lead').textContent()).toContain(invited.email);
      await page.getByLabel('New password').fill(HOSTED_PASSWORD);
      await page.getByLabel('Repeat the password').fill(HOSTED_PASSWORD);
      await page.getByRole('button', { name: 'Set password and sign in' }).click();
      await expect.poll(() => page.locator('.live').textContent()).toBe('Live');
      return page;
    },
    async signIn(invited) {
      const page = await hosted.newPage();
      await page.goto(hosted.server.dashboardUrl!);
      await page.getByLabel('E-mail').fill(invited.email);
      await page.getByLabel('Password').fill(HOSTED_PASSWORD);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await expect.poll(() => page.locator('.live').textContent()).toBe('Live');
      return page;
    },
  } as HostedDashboard;

  beforeAll(async () => {
    temp = makeTempDir(prefix);
    fs.mkdirSync(SCREENSHOTS, { recursive: true });
    hosted.server = await startWithDashboard(temp.dir, {
      GREENLIGHT_EDITION: 'hosted',
      GREENLIGHT_OPERATOR_KEY: HOSTED_OPERATOR_KEY,
      GREENLIGHT_WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
      GREENLIGHT_WEBHOOK_ALLOW_HTTP: 'true',
      ...env(),
    });
    hosted.browser = await launchChromium();
    const created = await call(hosted.server.url, 'POST', '/organizations', { name: 'Acme Support' }, { headers: { authorization: `Bearer ${HOSTED_OPERATOR_KEY}` } });
    hosted.adminKey = { authorization: `Bearer ${created.body.api_key.key}` };
  });

  afterAll(async () => {
    await hosted.browser?.close();
    if (hosted.server) await stopProgram(hosted.server);
    temp?.remove();
  });

  return hosted;
}
