import fs from 'node:fs';
import path from 'node:path';

/** Read back by test/chaos/print-summary.mjs; test-results/ is not committed. */
export const FIGURES_DIR = path.resolve(__dirname, '..', '..', '..', 'test-results', 'chaos');

/** Writes one chaos test's figures as `test-results/chaos/<name>.json`. */
export function writeFigures(name: 'fuzz' | 'crash' | 'burst', figures: Record<string, unknown>): void {
  fs.mkdirSync(FIGURES_DIR, { recursive: true });
  const document = { ...figures, recorded_at: new Date().toISOString() };
  fs.writeFileSync(path.join(FIGURES_DIR, `${name}.json`), `${JSON.stringify(document, null, 2)}\n`);
}

/** Counts per key (status codes, operations), written out in key order. */
export class Tally {
  private readonly counts = new Map<string, number>();

  add(key: string | number): void {
    this.counts.set(String(key), (this.counts.get(String(key)) ?? 0) + 1);
  }

  /** Sum of the counts whose key passes `which`. */
  sum(which: (key: string) => boolean = () => true): number {
    return [...this.counts].reduce((total, [key, count]) => total + (which(key) ? count : 0), 0);
  }

  toJSON(): Record<string, number> {
    return Object.fromEntries([...this.counts].sort(([a], [b]) => a.localeCompare(b)));
  }
}
