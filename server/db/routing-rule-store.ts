import { QueryTypes } from 'sequelize';
import { type Database, isUniqueViolation } from './database';
import { organizationRows } from './organization-rows';
import { isoTime } from './time';
import { transactionOf } from './unit-of-work';
import type { RoutableRule, RoutingRuleFields, RoutingRuleRecord } from '../domain/routing/records';
import type { RoutingRuleRepository } from '../domain/routing/ports';
import type { Tx } from '../domain/shared/unit-of-work';

interface RuleRow {
  id: number;
  organization_id: number;
  name: string;
  priority: number;
  conditions: string;
  assign_to_user_id: number | null;
  assign_to_team_id: number | null;
  is_active: boolean | number;
  created_at: number;
  updated_at: number;
}

const COLUMNS = 'id, organization_id, name, priority, conditions, assign_to_user_id, assign_to_team_id, is_active, created_at, updated_at';

const nullableId = (value: number | null): number | null => (value === null ? null : Number(value));

function toRule(row: RuleRow): RoutingRuleRecord {
  return {
    id: Number(row.id),
    organization_id: Number(row.organization_id),
    name: row.name,
    priority: Number(row.priority),
    conditions: JSON.parse(row.conditions) as Record<string, unknown>,
    assign_to_user_id: nullableId(row.assign_to_user_id),
    assign_to_team_id: nullableId(row.assign_to_team_id),
    // SQLite keeps booleans as 0 and 1.
    is_active: Boolean(row.is_active),
    created_at: isoTime(Number(row.created_at)),
    updated_at: isoTime(Number(row.updated_at)),
  };
}

/** The columns a rule's fields are written to. */
function written(rule: RoutingRuleFields): Record<string, unknown> {
  return { ...rule, conditions: JSON.stringify(rule.conditions) };
}

export class RoutingRuleStore implements RoutingRuleRepository {
  constructor(private readonly db: Database) {}

  async insert(tx: Tx, organizationId: number, rule: RoutingRuleFields, now: number): Promise<RoutingRuleRecord | null> {
    const row = { ...written(rule), organization_id: organizationId, created_at: now, updated_at: now };
    try {
      const id = await this.db.insertReturningId(
        `INSERT INTO routing_rules (organization_id, name, priority, conditions, assign_to_user_id, assign_to_team_id, is_active, created_at, updated_at)
         VALUES ($organization_id, $name, $priority, $conditions, $assign_to_user_id, $assign_to_team_id, $is_active, $created_at, $updated_at)`,
        row,
        transactionOf(tx),
      );
      return toRule({ id, ...row } as RuleRow);
    } catch (error) {
      if (isUniqueViolation(error)) return null;
      throw error;
    }
  }

  async list(organizationId: number): Promise<RoutingRuleRecord[]> {
    return (await organizationRows<RuleRow>(this.db, 'routing_rules', COLUMNS, organizationId)).map(toRule);
  }

  async find(organizationId: number, id: number, tx?: Tx): Promise<RoutingRuleRecord | null> {
    const [row] = await organizationRows<RuleRow>(this.db, 'routing_rules', COLUMNS, organizationId, id, tx);
    return row ? toRule(row) : null;
  }

  async update(tx: Tx, organizationId: number, id: number, rule: RoutingRuleFields, now: number): Promise<RoutingRuleRecord | null | 'name_taken'> {
    const current = await this.find(organizationId, id, tx);
    if (!current) return null;
    try {
      await this.db.sequelize.query(
        `UPDATE routing_rules SET name = $name, priority = $priority, conditions = $conditions, assign_to_user_id = $assign_to_user_id,
         assign_to_team_id = $assign_to_team_id, is_active = $is_active, updated_at = $now WHERE id = $id`,
        { bind: { ...written(rule), id, now }, transaction: transactionOf(tx) },
      );
    } catch (error) {
      if (isUniqueViolation(error)) return 'name_taken';
      throw error;
    }
    return { ...current, ...rule, updated_at: isoTime(now) };
  }

  async delete(tx: Tx, organizationId: number, id: number): Promise<boolean> {
    if (!(await this.find(organizationId, id, tx))) return false;
    await this.db.sequelize.query('DELETE FROM routing_rules WHERE id = $id', { bind: { id }, transaction: transactionOf(tx) });
    return true;
  }

  async routable(organizationId: number, tx?: Tx): Promise<RoutableRule[]> {
    const rows = await this.db.sequelize.query<RuleRow & { assignee_email: string | null; team_name: string | null }>(
      `SELECT r.id, r.organization_id, r.name, r.priority, r.conditions, r.assign_to_user_id, r.assign_to_team_id, r.is_active, r.created_at, r.updated_at,
              u.email AS assignee_email, t.name AS team_name
       FROM routing_rules r LEFT JOIN users u ON u.id = r.assign_to_user_id LEFT JOIN teams t ON t.id = r.assign_to_team_id
       WHERE r.organization_id = $organizationId ORDER BY r.id`,
      { bind: { organizationId }, type: QueryTypes.SELECT, transaction: tx ? transactionOf(tx) : undefined },
    );
    return rows.map((row) => ({ ...toRule(row), assignee_email: row.assignee_email, team_name: row.team_name }));
  }
}
