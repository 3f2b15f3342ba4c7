import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/** A fresh directory under the system temp dir; removed by the returned cleanup. */
export function makeTempDir(prefix = 'greenlight-test-'): { dir: string; remove: () => void } {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  return { dir, remove: () => fs.rmSync(dir, { recursive: true, force: true }) };
}
