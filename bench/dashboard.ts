import fs from 'node:fs';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { launchChromium } from './chromium';
import { median } from './http';

const RENDERER = path.resolve(__dirname, '..', 'renderer');

/** Bytes a first visit downloads, gzipped: index.html and every asset it references. */
export function initialBundleBytes(): number {
  const html = fs.readFileSync(path.join(RENDERER, 'index.html'), 'utf8');
  const referenced = [...html.matchAll(/(?:src|href)="\/(assets\/[^"]+)"/g)].map((m) => m[1]);
  return ['index.html', ...referenced].reduce((sum, file) => sum + gzipSync(fs.readFileSync(path.join(RENDERER, file))).length, 0);
}

/**
 * Milliseconds from navigation start to the first queue entry on screen, each visit in a
 * fresh browser context (nothing cached); the median of `visits`.
 */
export async function firstQueueRenderMs(dashboardUrl: string, visits: number): Promise<number> {
  const browser = await launchChromium();
  try {
    const samples: number[] = [];
    for (let visit = 0; visit < visits; visit += 1) {
      const context = await browser.newContext({ viewport: { width: 1400, height: 900 } });
      const page = await context.newPage();
      await page.goto(dashboardUrl, { waitUntil: 'commit' });
      await page.locator('.queue-item').first().waitFor({ state: 'visible', timeout: 30_000 });
      samples.push(await page.evaluate(() => performance.now()));
      await context.close();
    }
    return median(samples);
  } finally {
    await browser.close();
  }
}
