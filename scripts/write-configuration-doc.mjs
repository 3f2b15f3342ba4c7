// Rewrites the head of docs/configuration.md (its intro and the table of every setting) from the
// built settings table; the hand-written part below the marker line stays as it is.
// Run it as `npm run docs:config`, which compiles the server first.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import configurationDocModule from '../dist/server/config/configuration-doc.js';

const { configurationDoc } = configurationDocModule;
const page = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'docs', 'configuration.md');
const current = fs.existsSync(page) ? fs.readFileSync(page, 'utf8') : null;
const next = configurationDoc(current);
if (next === current) {
  console.log('docs/configuration.md is up to date');
} else {
  fs.writeFileSync(page, next);
  console.log('docs/configuration.md written');
}
