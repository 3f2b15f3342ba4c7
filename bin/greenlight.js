#!/usr/bin/env node
'use strict';
const path = require('node:path');
const fs = require('node:fs');

const entry = path.join(__dirname, '..', 'dist', 'server', 'cli', 'main.js');
if (!fs.existsSync(entry)) {
  process.stderr.write('greenlight: not built yet; run `npm install` (or `npm run build`) in ' + path.join(__dirname, '..') + '\n');
  // A `hook` that cannot run exits with 2, which makes Claude Code block the call rather than allow it.
  process.exit(process.argv[2] === 'hook' ? 2 : 1);
}
require(entry).main(process.argv);
