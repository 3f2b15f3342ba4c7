import { QueryTypes } from 'sequelize';
import type { Database } from './database';
import { isoTime } from './time';
import { transactionOf } from './unit-of-work';
import type { ApiKeyRecord, OrganizationRecord } from '../domain/organizations/records';
import type { KeyScope } from '../domain/shared/principal';
import type { NewApiKey, OrganizationRepository } from '../domain/organizations/ports';
import type { Tx } from '../domain/shared/unit-of-work';

interface OrganizationRow {
  id: number;
  name: string;
  settings: string;
  created_at: number;
  updated_at: number;
}

interface ApiKeyRow {
  id: number;
  organization_id: number;
  name: string;
  prefix: string;
  scope: string;
  agent_id: number | null;
  created_at: number;
  last_used_at: number | null;
  revoked_at: number | null;
}

const KEY_COLUMNS = 'id, organization_id, name, prefix, scope, agent_id, created_at, last_used_at, revoked_at';

function toOrganization(row: OrganizationRow): OrganizationRecord {
  return {
    id: Number(row.id),
    name: row.name,
    settings: JSON.parse(row.settings) as Record<string, unknown>,
    created_at: isoTime(Number(row.created_at)),
    updated_at: isoTime(Number(row.updated_at)),
  };
}

function toApiKey(row: ApiKeyRow): ApiKeyRecord {
  return {
    id: Number(row.id),
    organization_id: Number(row.organization_id),
    name: row.name,
    prefix: row.prefix,
    scope: row.scope as KeyScope,
    agent_id: row.agent_id === null ? null : Number(row.agent_id),
    created_at: isoTime(Number(row.created_at)),
    last_used_at: row.last_used_at === null ? null : isoTime(Number(row.last_used_at)),
    revoked_at: row.revoked_at === null ? null : isoTime(Number(row.revoked_at)),
  };
}

export class OrganizationStore implements OrganizationRepository {
  constructor(private readonly db: Database) {}

  async insertOrganization(tx: Tx, name: string, settings: Record<string, unknown>, now: number): Promise<OrganizationRecord> {
    const row = { name, settings: JSON.stringify(settings), created_at: now, updated_at: now };
    const id = await this.db.insertReturningId(
      'INSERT INTO organizations (name, settings, created_at, updated_at) VALUES ($name, $settings, $created_at, $updated_at)',
      row,
      transactionOf(tx),
    );
    return toOrganization({ id, ...row });
  }

  async findOrganization(id: number, tx?: Tx): Promise<OrganizationRecord | null> {
    const [row] = await this.db.sequelize.query<OrganizationRow>('SELECT id, name, settings, created_at, updated_at FROM organizations WHERE id = $id', {
      bind: { id },
      type: QueryTypes.SELECT,
      transaction: tx ? transactionOf(tx) : undefined,
    });
    return row ? toOrganization(row) : null;
  }

  async updateOrganization(tx: Tx, id: number, changes: { name?: string; settings?: Record<string, unknown> }, now: number): Promise<OrganizationRecord | null> {
    const current = await this.findOrganization(id, tx);
    if (!current) return null;
    const next = { ...current, name: changes.name ?? current.name, settings: changes.settings ?? current.settings, updated_at: isoTime(now) };
    await this.db.sequelize.query('UPDATE organizations SET name = $name, settings = $settings, updated_at = $now WHERE id = $id', {
      bind: { id, now, name: next.name, settings: JSON.stringify(next.settings) },
      transaction: transactionOf(tx),
    });
    return next;
  }

  async insertKey(tx: Tx, key: NewApiKey): Promise<ApiKeyRecord> {
    const id = await this.db.insertReturningId(
      'INSERT INTO api_keys (organization_id, name, prefix, key_hash, scope, agent_id, created_at) VALUES ($organization_id, $name, $prefix, $key_hash, $scope, $agent_id, $created_at)',
      { ...key },
      transactionOf(tx),
    );
    const { key_hash: _secret, ...shown } = key;
    return toApiKey({ id, ...shown, last_used_at: null, revoked_at: null });
  }

  async listKeys(organizationId: number): Promise<ApiKeyRecord[]> {
    const rows = await this.db.sequelize.query<ApiKeyRow>(`SELECT ${KEY_COLUMNS} FROM api_keys WHERE organization_id = $organizationId ORDER BY id`, {
      bind: { organizationId },
      type: QueryTypes.SELECT,
    });
    return rows.map(toApiKey);
  }

  async findKeyByHash(keyHash: string): Promise<ApiKeyRecord | null> {
    const [row] = await this.db.selectRows<ApiKeyRow>(`SELECT ${KEY_COLUMNS} FROM api_keys WHERE key_hash = $keyHash`, { keyHash });
    return row ? toApiKey(row) : null;
  }

  async revokeKey(tx: Tx, organizationId: number, id: number, now: number): Promise<'revoked' | 'already_revoked' | 'not_found'> {
    const transaction = transactionOf(tx);
    const [row] = await this.db.sequelize.query<{ revoked_at: number | null }>('SELECT revoked_at FROM api_keys WHERE id = $id AND organization_id = $organizationId', {
      bind: { id, organizationId },
      type: QueryTypes.SELECT,
      transaction,
    });
    if (!row) return 'not_found';
    if (row.revoked_at !== null) return 'already_revoked';
    await this.db.sequelize.query('UPDATE api_keys SET revoked_at = $now WHERE id = $id', { bind: { id, now }, transaction });
    return 'revoked';
  }

  async touchKey(id: number, now: number): Promise<void> {
    await this.db.write((transaction) => this.db.sequelize.query('UPDATE api_keys SET last_used_at = $now WHERE id = $id', { bind: { id, now }, transaction }));
  }
}
