import type { Database } from './database';
import { transactionOf } from './unit-of-work';
import type { Tx } from '../domain/shared/unit-of-work';

/**
 * The rows of `table` that belong to one organization, oldest first; with `id`, only that one
 * (none when it is another organization's).
 */
export function organizationRows<Row extends object>(db: Database, table: string, columns: string, organizationId: number, id?: number, tx?: Tx): Promise<Row[]> {
  // SQLite refuses a bound value the statement does not use: `id` only when asked for.
  const bind = id === undefined ? { organizationId } : { organizationId, id };
  return db.selectRows<Row>(`SELECT ${columns} FROM ${table} WHERE organization_id = $organizationId${id === undefined ? '' : ' AND id = $id'} ORDER BY id`, bind, tx ? transactionOf(tx) : undefined);
}
