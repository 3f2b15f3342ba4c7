import fs from 'node:fs';
import path from 'node:path';

/**
 * The installed package's root, found by walking up from this file, because the same code
 * runs from `server/` under the test runner and from `dist/server/` when built.
 */
function findPackageRoot(start: string): string {
  for (let dir = start; ; dir = path.dirname(dir)) {
    const manifest = path.join(dir, 'package.json');
    if (fs.existsSync(manifest) && (JSON.parse(fs.readFileSync(manifest, 'utf8')) as { name?: string }).name === 'greenlight') {
      return dir;
    }
    if (path.dirname(dir) === dir) throw new Error(`package.json of greenlight not found above ${start}`);
  }
}

export const packageRoot = findPackageRoot(__dirname);

const manifest = JSON.parse(fs.readFileSync(path.join(packageRoot, 'package.json'), 'utf8')) as { version: string; license: string };

export const packageVersion = manifest.version;

/** An SPDX identifier, such as `MIT`. */
export const packageLicense = manifest.license;
