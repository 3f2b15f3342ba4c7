import { QueryTypes } from 'sequelize';
import type { Database } from './database';
import { isoTime } from './time';
import { transactionOf } from './unit-of-work';
import { entryHash, GENESIS_HASH } from '../domain/audit';
import type { AuditActor, AuditEntryInput, AuditFilters, AuditRecord, AuditRepository, Tx } from '../domain/ports';

interface AuditRow {
  id: number;
  organization_id: number;
  actor_type: AuditActor['type'];
  actor_id: string | null;
  actor_label: string | null;
  action: string;
  target_type: string;
  target_id: number | null;
  data: string;
  created_at: number;
  prev_hash: string;
  hash: string;
}

const COLUMNS = 'id, organization_id, actor_type, actor_id, actor_label, action, target_type, target_id, data, created_at, prev_hash, hash';

const INSERT = `INSERT INTO audit_log (organization_id, actor_type, actor_id, actor_label, action, target_type, target_id, data, created_at, prev_hash, hash)
                VALUES ($organization_id, $actor_type, $actor_id, $actor_label, $action, $target_type, $target_id, $data, $created_at, $prev_hash, $hash)`;

function toRecord(row: AuditRow): AuditRecord {
  return {
    id: Number(row.id),
    organization_id: Number(row.organization_id),
    actor: { type: row.actor_type, id: row.actor_id, label: row.actor_label },
    action: row.action,
    target_type: row.target_type,
    target_id: row.target_id === null ? null : Number(row.target_id),
    data: JSON.parse(row.data) as Record<string, unknown>,
    created_at: isoTime(Number(row.created_at)),
    prev_hash: row.prev_hash,
    hash: row.hash,
  };
}

/** Each filter as a condition on its column. */
const FILTER_SQL: Record<keyof AuditFilters, string> = {
  action: 'action = $action',
  actor_type: 'actor_type = $actor_type',
  actor_id: 'actor_id = $actor_id',
  target_type: 'target_type = $target_type',
  target_id: 'target_id = $target_id',
  since: 'created_at >= $since',
  until: 'created_at <= $until',
};

export class AuditStore implements AuditRepository {
  constructor(private readonly db: Database) {}

  async append(tx: Tx, entries: readonly AuditEntryInput[], actor: AuditActor, now: number): Promise<void> {
    const transaction = transactionOf(tx);
    const heads = new Map<number, string>();
    for (const entry of entries) {
      let previous = heads.get(entry.organization_id);
      if (previous === undefined) previous = await this.head(entry.organization_id, tx);
      const fields = { ...entry, actor, created_at: isoTime(now) };
      const hash = entryHash(previous, fields);
      await this.db.insertReturningId(
        INSERT,
        {
          organization_id: entry.organization_id,
          actor_type: actor.type,
          actor_id: actor.id,
          actor_label: actor.label,
          action: entry.action,
          target_type: entry.target_type,
          target_id: entry.target_id,
          data: JSON.stringify(entry.data),
          created_at: now,
          prev_hash: previous,
          hash,
        },
        transaction,
      );
      heads.set(entry.organization_id, hash);
    }
  }

  async list(organizationId: number, filters: AuditFilters, before: number | null, limit: number): Promise<AuditRecord[]> {
    const conditions = ['organization_id = $organizationId'];
    const bind: Record<string, unknown> = { organizationId, limit };
    for (const [name, value] of Object.entries(filters) as Array<[keyof AuditFilters, unknown]>) {
      if (value === undefined) continue;
      conditions.push(FILTER_SQL[name]);
      bind[name] = value;
    }
    if (before !== null) {
      conditions.push('id < $before');
      bind.before = before;
    }
    const rows = await this.db.sequelize.query<AuditRow>(`SELECT ${COLUMNS} FROM audit_log WHERE ${conditions.join(' AND ')} ORDER BY id DESC LIMIT $limit`, {
      bind,
      type: QueryTypes.SELECT,
    });
    return rows.map(toRecord);
  }

  async chain(organizationId: number, after: number, limit: number): Promise<AuditRecord[]> {
    const rows = await this.db.sequelize.query<AuditRow>(`SELECT ${COLUMNS} FROM audit_log WHERE organization_id = $organizationId AND id > $after ORDER BY id LIMIT $limit`, {
      bind: { organizationId, after, limit },
      type: QueryTypes.SELECT,
    });
    return rows.map(toRecord);
  }

  /**
   * The hash of the organization's newest entry. On PostgreSQL the organization's row is locked
   * first, so that two transactions appending to one chain take turns instead of both linking
   * to the same entry; on SQLite writes already take turns. NO KEY UPDATE, not UPDATE: the
   * transactions have inserted rows that refer to the organization, each holding the KEY SHARE
   * lock that foreign key takes, which FOR UPDATE would wait on in both — a deadlock.
   */
  private async head(organizationId: number, tx: Tx): Promise<string> {
    const transaction = transactionOf(tx);
    if (this.db.dialect === 'postgres') {
      await this.db.sequelize.query('SELECT id FROM organizations WHERE id = $organizationId FOR NO KEY UPDATE', { bind: { organizationId }, transaction });
    }
    const [row] = await this.db.sequelize.query<{ hash: string }>('SELECT hash FROM audit_log WHERE organization_id = $organizationId ORDER BY id DESC LIMIT 1', {
      bind: { organizationId },
      type: QueryTypes.SELECT,
      transaction,
    });
    return row?.hash ?? GENESIS_HASH;
  }
}
