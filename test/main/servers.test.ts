import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { ReviewRecord } from '../../server';
import { appReady } from '../../main/modules/desktop-module';
import { servers } from '../../main/modules/servers';
import { type DesktopOnFakes, desktopOnFakes } from '../support/electron-fakes';
import { call, sampleReview } from '../support/server';

let desktop: DesktopOnFakes | undefined;
afterEach(async () => {
  await desktop?.close();
  desktop = undefined;
});

/** The servers started, and the API's address on this machine, whatever interfaces it listens on. */
async function started() {
  desktop = await desktopOnFakes();
  await desktop.enable(appReady, servers);
  return { ...desktop, loopback: `http://127.0.0.1:${desktop.apiPort}` };
}

async function listReviews(api: string, key?: string): Promise<number> {
  return (await call(api, 'GET', '/reviews', undefined, { headers: key ? { authorization: `Bearer ${key}` } : {} })).status;
}

describe('the servers module', () => {
  it('starts the API on loopback, with its data in the user directory, and the dashboard forwarding to it', async () => {
    const { ctx, userData, loopback } = await started();
    expect(ctx.servers.api?.url).toBe(loopback);
    expect(ctx.servers.api?.databaseLocation).toContain(path.join(userData, 'data'));
    expect(await listReviews(loopback)).toBe(200);
    const viaDashboard = await fetch(`${ctx.servers.dashboardUrl}/api/health`);
    expect(await viaDashboard.json()).toMatchObject({ status: 'healthy' });
  });

  it('turning LAN access on restarts the API on every interface with a generated key', async () => {
    const { ctx, userData, loopback, apiPort } = await started();
    await ctx.settings.update({ lanAccess: true });

    const key = ctx.settings.current.lanApiKey;
    expect(key).toMatch(/^[\w-]{32}$/);
    expect(ctx.servers.api?.url).toBe(`http://0.0.0.0:${apiPort}`);
    expect(ctx.servers.config).toMatchObject({ enable_auth: true, api_key: key });
    expect(await listReviews(loopback)).toBe(401);
    expect(await listReviews(loopback, key!)).toBe(200);
    expect(JSON.parse(fs.readFileSync(path.join(userData, 'desktop-settings.json'), 'utf8'))).toMatchObject({ lanAccess: true, lanApiKey: key });
  });

  it('turning it off again binds the API to loopback without a key, and keeps the key for next time', async () => {
    const { ctx, loopback } = await started();
    await ctx.settings.update({ lanAccess: true });
    const key = ctx.settings.current.lanApiKey;
    await ctx.settings.update({ lanAccess: false });

    expect(ctx.servers.config.api_host).toBe('127.0.0.1');
    expect(await listReviews(loopback)).toBe(200);
    expect(ctx.settings.current.lanApiKey).toBe(key);
  });

  it('leaves the API alone when only the notification level changes', async () => {
    const { ctx } = await started();
    const api = ctx.servers.api;
    await ctx.settings.update({ notifications: 'off' });
    expect(ctx.servers.api).toBe(api);
  });

  it('passes on the reviews of whichever API runs, after a restart too', async () => {
    const { ctx, loopback } = await started();
    const created: string[] = [];
    ctx.events.on('review.created', (review: ReviewRecord) => created.push(review.task_type));
    const submit = (task_type: string, key?: string) =>
      call(loopback, 'POST', '/reviews', { ...sampleReview, task_type }, { headers: key ? { authorization: `Bearer ${key}` } : {} });

    expect((await submit('before')).status).toBe(201);
    await ctx.settings.update({ lanAccess: true });
    expect((await submit('after', ctx.settings.current.lanApiKey!)).status).toBe(201);
    expect(created).toEqual(['before', 'after']);
  });

  it("when the API's port is taken, a dialog names it and the file to change, and the app exits before anything else starts", async () => {
    desktop = await desktopOnFakes();
    const { electron, userData, apiPort } = desktop;
    const taken = await occupy(apiPort);
    try {
      let enabledAfter = false;
      await desktop.enable(appReady, servers, { enable: () => void (enabledAfter = true) });
      expect(electron.errorBoxes).toEqual([
        { title: `Port ${apiPort} is already in use`, content: expect.stringContaining(`set api_port in ${path.join(userData, 'greenlight.yaml')}`) },
      ]);
      expect(electron.app.exitCode).toBe(1);
      expect(enabledAfter).toBe(false);
    } finally {
      taken.close();
    }
  });

  it("serves the dashboard on another port when its own is taken, since the window only needs one", async () => {
    desktop = await desktopOnFakes();
    const taken = await occupy(desktop.dashboardPort);
    try {
      await desktop.enable(appReady, servers);
      const { port } = new URL(desktop.ctx.servers.dashboardUrl);
      expect(Number(port)).not.toBe(desktop.dashboardPort);
      expect((await fetch(`${desktop.ctx.servers.dashboardUrl}/api/health`)).status).toBe(200);
      expect(desktop.electron.errorBoxes).toEqual([]);
    } finally {
      taken.close();
    }
  });
});

async function occupy(port: number): Promise<net.Server> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  return server;
}
