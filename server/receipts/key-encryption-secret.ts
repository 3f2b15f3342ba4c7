import fs from 'node:fs';
import path from 'node:path';
import { randomBytes } from 'node:crypto';

export const KEY_ENCRYPTION_FILE = 'receipt-key-encryption.key';

/**
 * The secret the receipt signing keys are encrypted under: the `receipt_key_encryption_key`
 * setting when set, else a random one made at first start in `data_dir` (readable by this
 * user only). Either way it is never in the database, so a dump, a backup or a replica of the
 * database alone does not give away the signing key; and an installation that sets nothing
 * (the desktop app, a quick start) still has one. Processes that share a PostgreSQL database
 * from different machines must share the setting.
 */
export function keyEncryptionSecret(setting: string, dataDir: string): string {
  if (setting !== '') return setting;
  const file = path.join(dataDir, KEY_ENCRYPTION_FILE);
  const existing = readSecret(file);
  if (existing !== null) return existing;
  // Written aside and linked into place: a process starting at the same moment either finds
  // the whole file or makes the link fail, never reads half of one.
  fs.mkdirSync(dataDir, { recursive: true });
  const temp = `${file}.${process.pid}.${randomBytes(4).toString('hex')}`;
  const descriptor = fs.openSync(temp, 'wx', 0o600);
  try {
    fs.writeSync(descriptor, `${randomBytes(32).toString('base64')}\n`);
    fs.fsyncSync(descriptor);
  } finally {
    fs.closeSync(descriptor);
  }
  try {
    fs.linkSync(temp, file);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  } finally {
    fs.rmSync(temp, { force: true });
  }
  const made = readSecret(file);
  if (made === null) throw new Error(`${file} is empty`);
  return made;
}

function readSecret(file: string): string | null {
  try {
    const text = fs.readFileSync(file, 'utf8').trim();
    return text === '' ? null : text;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw error;
  }
}
