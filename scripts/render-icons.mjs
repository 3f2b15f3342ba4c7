// Renders resources/icon.svg to the PNG sizes the desktop app and its packages use.
// Run by hand after changing the SVG: node scripts/render-icons.mjs
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright';

const resources = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'resources');
const svg = readFileSync(path.join(resources, 'icon.svg'), 'utf8');
const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
});
for (const [file, size] of [['icon.png', 512], ['tray.png', 32], ['tray@2x.png', 64]]) {
  const page = await browser.newPage({ viewport: { width: size, height: size } });
  await page.setContent(`<style>html,body{margin:0;background:transparent}</style>${svg.replace('<svg ', `<svg width="${size}" height="${size}" `)}`);
  await page.screenshot({ path: path.join(resources, file), omitBackground: true });
  await page.close();
}
await browser.close();
