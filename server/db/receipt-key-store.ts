import { QueryTypes } from 'sequelize';
import type { Database } from './database';
import { isUniqueViolation } from './database';
import { transactionOf } from './unit-of-work';
import type { ReceiptKeyRows, StoredReceiptKey } from '../receipts/keys';
import type { Tx } from '../domain/shared/unit-of-work';

interface KeyRow {
  kid: string;
  public_jwk: string;
  private_key: string;
  created_at: number | string;
  retired_at: number | string | null;
  current_slot: number | null;
}

/** The receipt signing keys (migration 0022): one row holds `current_slot = 1`, the one that signs. */
export class ReceiptKeyStore implements ReceiptKeyRows {
  constructor(private readonly db: Database) {}

  async current(tx?: Tx): Promise<Pick<StoredReceiptKey, 'kid' | 'private_key'> | null> {
    const [row] = await this.db.sequelize.query<Pick<KeyRow, 'kid' | 'private_key'>>('SELECT kid, private_key FROM receipt_keys WHERE current_slot = 1', {
      type: QueryTypes.SELECT,
      transaction: tx ? transactionOf(tx) : undefined,
    });
    return row ?? null;
  }

  async all(): Promise<StoredReceiptKey[]> {
    const rows = await this.db.sequelize.query<KeyRow>(
      'SELECT kid, public_jwk, private_key, created_at, retired_at, current_slot FROM receipt_keys ORDER BY CASE WHEN current_slot = 1 THEN 0 ELSE 1 END, id DESC',
      { type: QueryTypes.SELECT },
    );
    return rows.map((row) => ({
      kid: row.kid,
      public_jwk: row.public_jwk,
      private_key: row.private_key,
      created_at: Number(row.created_at),
      retired_at: row.retired_at === null ? null : Number(row.retired_at),
      current: row.current_slot === 1,
    }));
  }

  async makeCurrent(key: Omit<StoredReceiptKey, 'current' | 'retired_at'>, replace: boolean): Promise<boolean> {
    try {
      await this.db.write(async (transaction) => {
        if (replace) {
          await this.db.sequelize.query('UPDATE receipt_keys SET current_slot = NULL, retired_at = $now WHERE current_slot = 1', { bind: { now: key.created_at }, transaction });
        }
        await this.db.sequelize.query(
          'INSERT INTO receipt_keys (kid, public_jwk, private_key, current_slot, created_at) VALUES ($kid, $public_jwk, $private_key, 1, $created_at)',
          { bind: { ...key }, transaction },
        );
      });
      return true;
    } catch (error) {
      if (isUniqueViolation(error)) return false;
      throw error;
    }
  }
}
