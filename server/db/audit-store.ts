import { QueryTypes, type Transaction } from 'sequelize';
import type { Database, Statement } from './database';
import { isoTime } from './time';
import { transactionOf } from './unit-of-work';
import { AuditLinker } from './audit-linking';
import { type Logger, silentLogger } from '../logging';
import { entryHash, GENESIS_HASH, hashedText, SYSTEM_ACTOR } from '../domain/organizations/audit';
import type { AuditActor, AuditHead, AuditRecord, AuditTarget, HashedFields } from '../domain/organizations/records';
import { reviewLinks } from '../domain/reviews/records';
import type { AuditEntryInput, Tx } from '../domain/shared/unit-of-work';
import type { AuditFilters, AuditRepository } from '../domain/organizations/ports';

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
  sequence: number;
  prev_hash: string;
  hash: string;
}

const COLUMNS = 'id, organization_id, actor_type, actor_id, actor_label, action, target_type, target_id, data, created_at, sequence, prev_hash, hash';

const INSERT = `INSERT INTO audit_log (organization_id, actor_type, actor_id, actor_label, action, target_type, target_id, data, created_at, sequence, prev_hash, hash)
                VALUES ($organization_id, $actor_type, $actor_id, $actor_label, $action, $target_type, $target_id, $data, $created_at, $sequence, $prev_hash, $hash)`;

const PENDING_COLUMNS = ['organization_id', 'actor_type', 'actor_id', 'actor_label', 'action', 'target_type', 'target_id', 'data', 'created_at', 'hashed'] as const;

/** Each pending entry's parameter names, by its index in the insert (`$audit_<column>_<index>`). */
const pendingParameterNames: Array<Record<(typeof PENDING_COLUMNS)[number], string>> = [];
const pendingInserts: string[] = [];

function pendingParameters(index: number): Record<(typeof PENDING_COLUMNS)[number], string> {
  pendingParameterNames[index] ??= Object.fromEntries(PENDING_COLUMNS.map((column) => [column, `audit_${column}_${index}`])) as Record<(typeof PENDING_COLUMNS)[number], string>;
  return pendingParameterNames[index];
}

/** The insert of `count` pending entries, written once per count: most changes write one. */
function pendingInsertSql(count: number): string {
  pendingInserts[count] ??= `INSERT INTO audit_pending (${PENDING_COLUMNS.join(', ')}) VALUES ${Array.from({ length: count }, (_, index) => {
    const names = pendingParameters(index);
    return `(${PENDING_COLUMNS.map((column) => `$${names[column]}`).join(', ')})`;
  }).join(', ')}`;
  return pendingInserts[count];
}

/** The entry as its hash covers it: by its actor (the system's, for what the system did), at `now`. */
function hashedFieldsOf({ organization_id, action, target_type, target_id, data, bySystem }: AuditEntryInput, actor: AuditActor, now: number): HashedFields {
  // Named, not spread: every hosted create builds one, and a spread copies through a generic path.
  return { organization_id, action, target_type, target_id, data, actor: bySystem ? SYSTEM_ACTOR : actor, created_at: isoTime(now) };
}

/** An entry's columns but its place in the chain. */
function columnsOf(fields: HashedFields, now: number): Record<string, unknown> {
  const { organization_id, actor, action, target_type, target_id, data } = fields;
  return { organization_id, actor_type: actor.type, actor_id: actor.id, actor_label: actor.label, action, target_type, target_id, data: JSON.stringify(data), created_at: now };
}

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
    sequence: Number(row.sequence),
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

/**
 * Where each kind of target the log names lives, and the column people know it by. Each is
 * read within the organization (`organization_id`), so no other organization's name shows.
 */
const TARGET_TABLES: Readonly<Record<string, readonly [table: string, nameColumn: string]>> = {
  review: ['reviews', 'task_type'],
  user: ['users', 'name'],
  team: ['teams', 'name'],
  api_key: ['api_keys', 'name'],
  agent: ['agents', 'name'],
  routing_rule: ['routing_rules', 'name'],
  workflow: ['workflows', 'name'],
  webhook: ['webhooks', 'url'],
  attachment: ['attachments', 'file_name'],
};

export class AuditStore implements AuditRepository {
  /** PostgreSQL's: chains entries after their transactions commit (migration 0029); null on SQLite, which chains them as it writes them. */
  readonly linker: AuditLinker | null;

  /** `dashboardUrl`: as the reviews' `links` take it; null where it is not known. */
  constructor(
    private readonly db: Database,
    private readonly dashboardUrl: string | null = null,
    log: Logger = silentLogger,
  ) {
    this.linker = db.sql.sharedByProcesses ? new AuditLinker(db, log) : null;
  }

  /**
   * PostgreSQL's append: the statement that inserts `entries` into `audit_pending`, to be chained
   * into their organizations' logs after the commit (`linkLater`), so that an organization's
   * changes do not commit one at a time behind its head. Its parameters are named `$audit_…`, so
   * the outbox can send it within a statement of its own. Null on SQLite, which links as it appends.
   */
  pendingInsert(entries: readonly AuditEntryInput[], actor: AuditActor, now: number): Statement | null {
    if (!this.db.sql.sharedByProcesses) return null;
    const bind: Record<string, unknown> = {};
    entries.forEach((entry, index) => {
      const fields = hashedFieldsOf(entry, actor, now);
      const columns = columnsOf(fields, now);
      const names = pendingParameters(index);
      for (const column of PENDING_COLUMNS) bind[names[column]] = column === 'hashed' ? hashedText(fields) : columns[column];
    });
    return { sql: pendingInsertSql(entries.length), bind };
  }

  /** The organizations whose entries have just committed into `audit_pending` (PostgreSQL): chained soon. */
  linkLater(organizationIds: Iterable<number>): void {
    this.linker?.later(organizationIds);
  }

  async link(organizationId: number): Promise<void> {
    await this.linker?.link(organizationId);
  }

  /**
   * On PostgreSQL the entries are linked after the commit (`pendingInsert`). SQLite's writes take
   * turns, so the head read here is still the head when the transaction commits: the entries
   * are linked to it at once.
   */
  async append(tx: Tx, entries: readonly AuditEntryInput[], actor: AuditActor, now: number): Promise<void> {
    const transaction = transactionOf(tx);
    const pending = this.pendingInsert(entries, actor, now);
    if (pending) {
      await this.db.selectRows(pending.sql, pending.bind, transaction);
      return;
    }
    const heads = new Map<number, AuditHead>();
    for (const entry of entries) {
      const previous = heads.get(entry.organization_id) ?? (await this.readHead(entry.organization_id, transaction)) ?? { sequence: 0, hash: GENESIS_HASH };
      const fields = hashedFieldsOf(entry, actor, now);
      const head = { sequence: previous.sequence + 1, hash: entryHash(previous.hash, fields) };
      await this.db.insertReturningId(INSERT, { ...columnsOf(fields, now), sequence: head.sequence, prev_hash: previous.hash, hash: head.hash }, transaction);
      heads.set(entry.organization_id, head);
    }
    for (const [organizationId, head] of heads) {
      await this.db.sequelize.query(
        'INSERT INTO audit_heads (organization_id, sequence, hash) VALUES ($organizationId, $sequence, $hash) ON CONFLICT (organization_id) DO UPDATE SET sequence = excluded.sequence, hash = excluded.hash',
        { bind: { organizationId, ...head }, transaction },
      );
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
      conditions.push('sequence < $before');
      bind.before = before;
    }
    const rows = await this.db.sequelize.query<AuditRow>(`SELECT ${COLUMNS} FROM audit_log WHERE ${conditions.join(' AND ')} ORDER BY sequence DESC LIMIT $limit`, {
      bind,
      type: QueryTypes.SELECT,
    });
    return rows.map(toRecord);
  }

  async targets(organizationId: number, refs: ReadonlyArray<{ type: string; id: number }>): Promise<AuditTarget[]> {
    const idsByType = new Map<string, Set<number>>();
    for (const { type, id } of refs) idsByType.set(type, (idsByType.get(type) ?? new Set()).add(id));
    const found = await Promise.all(
      [...idsByType].map(async ([type, ids]): Promise<AuditTarget[]> => {
        if (type === 'organization') {
          if (!ids.has(organizationId)) return [];
          const [row] = await this.db.sequelize.query<{ name: string }>('SELECT name FROM organizations WHERE id = :organizationId', {
            replacements: { organizationId },
            type: QueryTypes.SELECT,
          });
          return row ? [{ type, id: organizationId, name: row.name }] : [];
        }
        const kind = TARGET_TABLES[type];
        if (!kind) return [];
        const [table, nameColumn] = kind;
        const rows = await this.db.sequelize.query<{ id: number; name: string }>(
          `SELECT id, ${nameColumn} AS name FROM ${table} WHERE organization_id = :organizationId AND id IN (:ids)`,
          { replacements: { organizationId, ids: [...ids] }, type: QueryTypes.SELECT },
        );
        return rows.map((row) => {
          const id = Number(row.id);
          const links = type === 'review' ? reviewLinks(this.dashboardUrl, id) : undefined;
          return { type, id, name: row.name, ...(links && { links }) };
        });
      }),
    );
    return found.flat();
  }

  async chain(organizationId: number, after: number, limit: number): Promise<AuditRecord[]> {
    const rows = await this.db.sequelize.query<AuditRow>(
      `SELECT ${COLUMNS} FROM audit_log WHERE organization_id = $organizationId AND sequence > $after ORDER BY sequence LIMIT $limit`,
      { bind: { organizationId, after, limit }, type: QueryTypes.SELECT },
    );
    return rows.map(toRecord);
  }

  async head(organizationId: number): Promise<AuditHead> {
    return (await this.readHead(organizationId)) ?? { sequence: 0, hash: GENESIS_HASH };
  }

  private async readHead(organizationId: number, transaction?: Transaction): Promise<AuditHead | null> {
    const [row] = await this.db.sequelize.query<AuditHead>('SELECT sequence, hash FROM audit_heads WHERE organization_id = $organizationId', {
      bind: { organizationId },
      type: QueryTypes.SELECT,
      transaction,
    });
    return row ? { sequence: Number(row.sequence), hash: row.hash } : null;
  }
}
