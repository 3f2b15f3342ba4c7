import fs from 'node:fs';
import path from 'node:path';
import express, { type Express } from 'express';
import type { Logger } from '../logging';
import { packageRoot } from '../package-info';
import { trustProxies } from '../http/client-address';
import { sendProblem } from '../http/problems';
import { type Exposure, hostsAllowed, refuseCrossSiteWrites } from '../http/protection';
import { apiProxy } from './proxy';

/** Where `npm run build` puts the dashboard. */
export const DASHBOARD_DIR = path.join(packageRoot, 'dist', 'renderer');

export class DashboardNotBuiltError extends Error {
  constructor(dir: string) {
    super(`the dashboard is not built (no ${path.join(dir, 'index.html')}); run npm run build`);
    this.name = 'DashboardNotBuiltError';
  }
}

const CONTENT_SECURITY_POLICY = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  // Attachment previews are fetched with the API key and shown from blob: URLs.
  "img-src 'self' data: blob:",
  "frame-src blob:",
  "object-src 'none'",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

export interface DashboardOptions {
  apiUrl: string;
  /** Who can reach the dashboard: it answers to the same `Host` names as an API so exposed would. */
  exposure: Exposure;
  /** Peers whose `X-Forwarded-For` is passed on to the API rather than replaced (`trusted_proxies`). */
  trustedProxies: readonly string[];
  log: Logger;
  staticDir?: string;
}

/** The reviewer dashboard: the built Vue app plus `/api/*` forwarded to the API. */
export function createDashboardApp(options: DashboardOptions): Express {
  const staticDir = options.staticDir ?? DASHBOARD_DIR;
  const indexFile = path.join(staticDir, 'index.html');
  if (!fs.existsSync(indexFile)) throw new DashboardNotBuiltError(staticDir);

  const app = express();
  app.disable('x-powered-by');
  trustProxies(app, options.trustedProxies);
  // Before the proxy: it addresses the API by its own name, so the API cannot tell a rebound request.
  app.use(hostsAllowed(options.exposure));
  app.use('/api', refuseCrossSiteWrites(options.exposure), apiProxy(options.apiUrl, options.log));
  app.use((_req, res, next) => {
    res.set({
      'Content-Security-Policy': CONTENT_SECURITY_POLICY,
      'X-Content-Type-Options': 'nosniff',
      'Referrer-Policy': 'no-referrer',
      'Cross-Origin-Opener-Policy': 'same-origin',
    });
    next();
  });
  // Hashed asset names never change content, so browsers may keep them; index.html must not be kept.
  app.use('/assets', express.static(path.join(staticDir, 'assets'), { immutable: true, maxAge: '1y' }));
  app.use('/assets', (req, res) => sendProblem(res, 404, `no asset ${req.path}`));
  app.use(express.static(staticDir, { index: false, maxAge: 0 }));
  app.get(/.*/, (_req, res) => {
    res.set('Cache-Control', 'no-cache').sendFile(indexFile);
  });
  return app;
}
