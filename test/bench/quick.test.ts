import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { makeTempDir } from '../support/temp';

const ROOT = path.resolve(__dirname, '..', '..');

interface Figure {
  section: string;
  figure: string;
  value: number | null;
  target: number | null;
  ratio: number | null;
  note?: string;
}

/**
 * CI runs the small benchmark so that it keeps working; its figures are printed, never judged
 * (the machines are shared and noisy). What is checked is that every measurement ran and
 * produced a figure, with a ratio wherever there is a target.
 */
describe('npm run bench -- --quick', () => {
  it('measures every section and writes each figure with its target and ratio', async () => {
    const temp = makeTempDir('greenlight-bench-');
    try {
      const out = path.join(temp.dir, 'results.json');
      const { stdout } = await promisify(execFile)(
        'sh',
        ['-c', 'ulimit -n $(ulimit -Hn); exec "$0" dist/bench/run.js --quick --out "$1"', process.execPath, out],
        { cwd: ROOT, maxBuffer: 16 * 2 ** 20 },
      );
      process.stdout.write(stdout);
      const results = JSON.parse(fs.readFileSync(out, 'utf8')) as { quick: boolean; figures: Figure[] };

      expect(results.quick).toBe(true);
      expect(new Set(results.figures.map((f) => f.section))).toEqual(
        new Set([
          'Decision delivery',
          'Concurrent waiters',
          'Create throughput',
          'Reads at scale',
          'Dashboard',
          'PostgreSQL delivery (2 processes)',
          'PostgreSQL create throughput',
          'PostgreSQL hosted creates',
          'PostgreSQL reads at scale',
          'Webhook delivery',
          'Evaluation run',
          'PostgreSQL evaluation run',
        ]),
      );
      for (const figure of results.figures) {
        const measured = typeof figure.value === 'number' && Number.isFinite(figure.value) && figure.value >= 0;
        // Only the browser and PostgreSQL measurements may be absent, and then they say why.
        if (!measured) expect(figure.note, `${figure.figure} has no value`).toMatch(/^skipped: /);
        if (measured && figure.target !== null) expect(figure.ratio, figure.figure).toBeCloseTo((figure.value as number) / figure.target, 6);
        expect(stdout).toContain(figure.figure);
      }
      const answered = results.figures.filter((f) => ['agents answered with their decision', 'decisions announced by webhook', 'decided reviews the run counted'].includes(f.figure));
      expect(answered.map((f) => f.value)).toEqual(answered.map((f) => f.target));
    } finally {
      temp.remove();
    }
  }, 300_000);
});
