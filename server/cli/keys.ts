import { openKeyAdministration } from '../app/administration';
import { loadConfig } from '../config/load';
import type { ReceiptKeySummary } from '../receipts/keys';

function line(key: ReceiptKeySummary): string {
  return `${key.kid}  ${key.current ? 'current' : `retired ${key.retired_at ?? ''}`.trim()}  made ${key.created_at}\n`;
}

/**
 * `greenlight keys rotate`: a new signing key, current at once for every API process on the
 * database (each reads the current key when it signs); the earlier ones stay listed.
 */
export async function runKeysRotate(options: { config?: string }, out: NodeJS.WritableStream): Promise<void> {
  const { config } = loadConfig({ file: options.config });
  const administration = await openKeyAdministration(config);
  try {
    const key = await administration.keys.rotate();
    out.write(`new current receipt signing key: ${key.kid}\nearlier keys stay at /.well-known/jwks.json, so the receipts they signed still verify\n`);
  } finally {
    await administration.close();
  }
}

/** `greenlight keys list`: every receipt signing key, the current one first. */
export async function runKeysList(options: { config?: string }, out: NodeJS.WritableStream): Promise<void> {
  const { config } = loadConfig({ file: options.config });
  const administration = await openKeyAdministration(config);
  try {
    for (const key of await administration.keys.list()) out.write(line(key));
  } finally {
    await administration.close();
  }
}
