import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { freePort, startProgram } from '../support/cli';
import { makeTempDir } from '../support/temp';

/** The desktop app's entry, run under plain Node: headless mode must not need Electron at all. */
const MAIN = path.resolve(__dirname, '..', '..', 'dist', 'main', 'main.js');

let temp: ReturnType<typeof makeTempDir>;
beforeEach(() => {
  temp = makeTempDir('greenlight-headless-');
});
afterEach(() => temp.remove());

describe('the desktop entry in headless mode', () => {
  it.each([
    ['--headless', ['--headless'], {}],
    ['GREENLIGHT_HEADLESS=1', [], { GREENLIGHT_HEADLESS: '1' }],
  ])('serves /health with %s, logs JSON to stdout and stops on SIGTERM', async (_label, args, env) => {
    const port = await freePort();
    const app = await startProgram(MAIN, [...args, '--port', String(port)], { cwd: temp.dir, env });
    try {
      expect(app.url).toBe(`http://127.0.0.1:${port}`);
      expect(app.dashboardUrl).toBeUndefined();
      const health = await fetch(`${app.url}/health`);
      expect(await health.json()).toMatchObject({ status: 'healthy', database: 'ok' });
      const firstLine = app.output().split('\n')[0];
      expect(JSON.parse(firstLine)).toMatchObject({ level: 'info', message: 'starting Greenlight' });
      expect(app.output()).not.toMatch(/dashboard/);
    } finally {
      app.child.kill('SIGTERM');
    }
    expect(await app.exited).toBe(0);
  });
});
