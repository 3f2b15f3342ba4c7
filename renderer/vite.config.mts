import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import vue from '@vitejs/plugin-vue';
import { defineConfig, type Plugin } from 'vite';

const INITIAL_PAGE_BUDGET_KB = 300;
const here = path.dirname(fileURLToPath(import.meta.url));

/**
 * Prints what the first visit downloads (index.html and the assets it references), gzipped,
 * against the budget, and fails the build when the budget is exceeded.
 */
function initialPageReport(): Plugin {
  let outDir = '';
  return {
    name: 'greenlight-initial-page-report',
    configResolved(config) {
      outDir = path.resolve(config.root, config.build.outDir);
    },
    closeBundle() {
      const html = readFileSync(path.join(outDir, 'index.html'), 'utf8');
      const referenced = [...html.matchAll(/(?:src|href)="\/(assets\/[^"]+)"/g)].map((m) => m[1]);
      const files = ['index.html', ...referenced];
      const gzipped = files.reduce((sum, file) => sum + gzipSync(readFileSync(path.join(outDir, file))).length, 0);
      const kb = gzipped / 1024;
      const all = readdirSync(path.join(outDir, 'assets')).length;
      console.log(`initial page: ${kb.toFixed(1)} KB gzipped in ${files.length} files (budget ${INITIAL_PAGE_BUDGET_KB} KB; ${all} assets in all)`);
      if (kb > INITIAL_PAGE_BUDGET_KB) throw new Error(`the initial page is ${kb.toFixed(1)} KB gzipped, over the ${INITIAL_PAGE_BUDGET_KB} KB budget`);
    },
  };
}

export default defineConfig({
  root: here,
  base: '/',
  plugins: [vue(), initialPageReport()],
  build: {
    outDir: path.resolve(here, '..', 'dist', 'renderer'),
    emptyOutDir: true,
    target: 'es2022',
    sourcemap: false,
  },
});
