import fs from 'node:fs';
import { PREBUILT_DOCUMENT, generateDocument } from './document';

// Run by `npm run build` after tsc: freezes the document next to the compiled server.
fs.writeFileSync(PREBUILT_DOCUMENT, `${JSON.stringify(generateDocument(), null, 2)}\n`);
process.stdout.write(`wrote ${PREBUILT_DOCUMENT}\n`);
