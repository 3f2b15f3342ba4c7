import { QueryTypes } from 'sequelize';
import { type Database, insertInTurn, isUniqueViolation } from './database';
import { organizationRows } from './organization-rows';
import { isoTime } from './time';
import { transactionOf } from './unit-of-work';
import type { MarkOutcomes, RoutableRule, RoutingRuleFields, RoutingRuleRecord, RuleMark, RuleMode } from '../domain/routing/records';
import type { AutoDecision } from '../domain/routing/conditions';
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
  auto_decide: AutoDecision | null;
  mode: RuleMode | null;
  audit_sample_rate: number | null;
  slack_channel_id: string | null;
  is_active: boolean | number;
  created_at: number;
  updated_at: number;
}

const COLUMNS = 'id, organization_id, name, priority, conditions, assign_to_user_id, assign_to_team_id, auto_decide, mode, audit_sample_rate, slack_channel_id, is_active, created_at, updated_at';

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
    action: row.auto_decide ? { auto_decide: row.auto_decide } : null,
    mode: row.mode ?? null,
    audit_sample_rate: row.audit_sample_rate === null || row.audit_sample_rate === undefined ? null : Number(row.audit_sample_rate),
    slack_channel_id: row.slack_channel_id ?? null,
    // SQLite keeps booleans as 0 and 1.
    is_active: Boolean(row.is_active),
    created_at: isoTime(Number(row.created_at)),
    updated_at: isoTime(Number(row.updated_at)),
  };
}

/** The columns a rule's fields are written to. */
function written(rule: RoutingRuleFields): Record<string, unknown> {
  const { action, ...fields } = rule;
  return { ...fields, conditions: JSON.stringify(rule.conditions), auto_decide: action?.auto_decide ?? null };
}

export class RoutingRuleStore implements RoutingRuleRepository {
  constructor(private readonly db: Database) {}

  async insert(tx: Tx, organizationId: number, rule: RoutingRuleFields, now: number): Promise<RoutingRuleRecord | null> {
    const row = { ...written(rule), organization_id: organizationId, created_at: now, updated_at: now };
    try {
      const id = await this.db.insertReturningId(
        `INSERT INTO routing_rules (organization_id, name, priority, conditions, assign_to_user_id, assign_to_team_id, auto_decide, mode, audit_sample_rate, slack_channel_id, is_active, created_at, updated_at)
         VALUES ($organization_id, $name, $priority, $conditions, $assign_to_user_id, $assign_to_team_id, $auto_decide, $mode, $audit_sample_rate, $slack_channel_id, $is_active, $created_at, $updated_at)`,
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
         assign_to_team_id = $assign_to_team_id, auto_decide = $auto_decide, mode = $mode, audit_sample_rate = $audit_sample_rate, slack_channel_id = $slack_channel_id,
         is_active = $is_active,
         updated_at = $now WHERE id = $id`,
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
      `SELECT r.id, r.organization_id, r.name, r.priority, r.conditions, r.assign_to_user_id, r.assign_to_team_id, r.auto_decide, r.mode, r.audit_sample_rate,
              r.slack_channel_id, r.is_active, r.created_at, r.updated_at,
              u.email AS assignee_email, t.name AS team_name
       FROM routing_rules r LEFT JOIN users u ON u.id = r.assign_to_user_id LEFT JOIN teams t ON t.id = r.assign_to_team_id
       WHERE r.organization_id = $organizationId ORDER BY r.id`,
      { bind: { organizationId }, type: QueryTypes.SELECT, transaction: tx ? transactionOf(tx) : undefined },
    );
    return rows.map((row) => ({ ...toRule(row), assignee_email: row.assignee_email, team_name: row.team_name }));
  }

  async slackChannelOf(tx: Tx, organizationId: number, name: string): Promise<string | null> {
    const [row] = await this.db.sequelize.query<{ slack_channel_id: string | null }>('SELECT slack_channel_id FROM routing_rules WHERE organization_id = $organizationId AND name = $name', {
      bind: { organizationId, name },
      type: QueryTypes.SELECT,
      transaction: transactionOf(tx),
    });
    return row?.slack_channel_id ?? null;
  }

  async saveMark(tx: Tx, organizationId: number, reviewId: number, mark: RuleMark): Promise<void> {
    // Part of the create of a review a rule marks: on PostgreSQL, sent within the create's last statement.
    await insertInTurn(
      this.db,
      {
        sql: 'INSERT INTO review_rule_marks (review_id, organization_id, rule_id, kind, decision, sample_rate) VALUES ($mark_review_id, $mark_organization_id, $mark_rule_id, $mark_kind, $mark_decision, $mark_sample_rate)',
        bind: { mark_review_id: reviewId, mark_organization_id: organizationId, mark_rule_id: mark.rule_id, mark_kind: mark.kind, mark_decision: mark.decision, mark_sample_rate: mark.sample_rate },
      },
      transactionOf(tx),
    );
  }

  async marksOf(reviewIds: readonly number[]): Promise<Map<number, RuleMark>> {
    if (reviewIds.length === 0) return new Map();
    const rows = await this.db.sequelize.query<RuleMark & { review_id: number }>(
      'SELECT review_id, rule_id, kind, decision, sample_rate FROM review_rule_marks WHERE review_id IN (:reviewIds)',
      { replacements: { reviewIds: [...reviewIds] }, type: QueryTypes.SELECT },
    );
    return new Map(
      rows.map((row) => [
        Number(row.review_id),
        { rule_id: Number(row.rule_id), kind: row.kind, decision: row.decision, sample_rate: row.sample_rate === null ? null : Number(row.sample_rate) },
      ]),
    );
  }

  async outcomes(organizationId: number, ruleIds: readonly number[]): Promise<Map<number, MarkOutcomes>> {
    if (ruleIds.length === 0) return new Map();
    // A person agreed with an approve when they approved as proposed, with a reject when they rejected.
    const rows = await this.db.sequelize.query<{ rule_id: number; decided: number; agreed: number; pending: number }>(
      `SELECT m.rule_id,
              SUM(CASE WHEN r.status <> 'pending' THEN 1 ELSE 0 END) AS decided,
              SUM(CASE WHEN (m.decision = 'approve' AND r.status = 'approved') OR (m.decision = 'reject' AND r.status = 'rejected') THEN 1 ELSE 0 END) AS agreed,
              SUM(CASE WHEN r.status = 'pending' THEN 1 ELSE 0 END) AS pending
       FROM review_rule_marks m JOIN reviews r ON r.id = m.review_id LEFT JOIN decisions d ON d.review_id = r.id
       WHERE m.organization_id = :organizationId AND m.rule_id IN (:ruleIds) AND (d.reviewer_name IS NULL OR d.reviewer_name <> 'policy:expired')
       GROUP BY m.rule_id`,
      { replacements: { organizationId, ruleIds: [...ruleIds] }, type: QueryTypes.SELECT },
    );
    return new Map(
      rows.map((row) => [Number(row.rule_id), { decided: Number(row.decided), agreed: Number(row.agreed), pending: Number(row.pending) }]),
    );
  }
}
