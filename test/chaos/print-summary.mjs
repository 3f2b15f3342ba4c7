// Prints the figures the chaos tests left in test-results/chaos/ as one table.
// Plain JavaScript so that `node` runs it without a TypeScript loader.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const FIGURES_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', 'test-results', 'chaos');

function figures(name) {
  const file = path.join(FIGURES_DIR, `${name}.json`);
  return fs.existsSync(file) ? JSON.parse(fs.readFileSync(file, 'utf8')) : undefined;
}

const fuzz = figures('fuzz');
const crash = figures('crash');
const burst = figures('burst');
const notRun = 'not run';

const rows = [
  [
    'fuzz',
    'inputs tried',
    fuzz ? String(fuzz.inputs_tried) : notRun,
    fuzz
      ? `5xx: ${fuzz.server_errors}, contract violations: ${fuzz.violations}, uncaught exceptions: ${fuzz.uncaught_exceptions}, partial uploads left: ${fuzz.partial_uploads_left}, seed ${fuzz.seed}`
      : '',
  ],
  [
    'crash',
    'rounds survived',
    crash ? `${crash.rounds_survived} / ${crash.rounds}` : notRun,
    crash ? `lost: ${crash.problem_kinds.lost}, half-present: ${crash.problem_kinds['half-present']}, orphaned files: ${crash.orphaned_files}` : '',
  ],
  ['burst', 'requests under burst', burst ? String(burst.requests_sent) : notRun, burst ? `${burst.in_flight} in flight, ${burst.creates_per_second} creates/s, SQLITE_BUSY leaks: ${burst.sqlite_busy_leaks}` : ''],
  ['burst', '5xx count', burst ? String(burst.server_errors) : notRun, burst ? `deliberate 503 with Retry-After: ${burst.deliberate_503s}` : ''],
];

const header = ['test', 'figure', 'value', 'details'];
const widths = header.map((title, column) => Math.max(title.length, ...rows.map((row) => row[column].length)));
const line = (cells) => cells.map((cell, column) => cell.padEnd(widths[column])).join('  ').trimEnd();

console.log(`Chaos summary (${path.relative(process.cwd(), FIGURES_DIR) || '.'})`);
console.log(line(header));
console.log(line(widths.map((width) => '-'.repeat(width))));
for (const row of rows) console.log(line(row));
