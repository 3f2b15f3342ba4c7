import { QueryTypes } from 'sequelize';
import { type Database, insertInTurn } from './database';
import { organizationRows } from './organization-rows';
import { isoTime } from './time';
import { transactionOf } from './unit-of-work';
import type { Tx } from '../domain/shared/unit-of-work';
import type { WorkflowFields, WorkflowRecord } from '../domain/workflows/records';
import type { WorkflowRepository } from '../domain/workflows/ports';
import type { UserRole } from '../domain/people/records';
import type { Voter, WorkflowStage, WorkflowState } from '../domain/workflows/voting';

interface WorkflowRow {
  id: number;
  organization_id: number;
  name: string;
  conditions: string;
  stages: string;
  is_active: boolean | number;
  created_at: number;
  updated_at: number;
}

const COLUMNS = 'id, organization_id, name, conditions, stages, is_active, created_at, updated_at';

function toWorkflow(row: WorkflowRow): WorkflowRecord {
  return {
    id: Number(row.id),
    organization_id: Number(row.organization_id),
    name: row.name,
    conditions: JSON.parse(row.conditions) as Record<string, unknown>,
    stages: JSON.parse(row.stages) as WorkflowStage[],
    // SQLite keeps booleans as 0 and 1.
    is_active: Boolean(row.is_active),
    created_at: isoTime(Number(row.created_at)),
    updated_at: isoTime(Number(row.updated_at)),
  };
}

function written(workflow: WorkflowFields): Record<string, unknown> {
  return { name: workflow.name, conditions: JSON.stringify(workflow.conditions), stages: JSON.stringify(workflow.stages), is_active: workflow.is_active };
}

export class WorkflowStore implements WorkflowRepository {
  constructor(private readonly db: Database) {}

  async insert(tx: Tx, organizationId: number, workflow: WorkflowFields, now: number): Promise<WorkflowRecord> {
    const row = { ...written(workflow), organization_id: organizationId, created_at: now, updated_at: now };
    const id = await this.db.insertReturningId(
      `INSERT INTO workflows (organization_id, name, conditions, stages, is_active, created_at, updated_at)
       VALUES ($organization_id, $name, $conditions, $stages, $is_active, $created_at, $updated_at)`,
      row,
      transactionOf(tx),
    );
    return toWorkflow({ id, ...row } as WorkflowRow);
  }

  async list(organizationId: number, tx?: Tx): Promise<WorkflowRecord[]> {
    return (await organizationRows<WorkflowRow>(this.db, 'workflows', COLUMNS, organizationId, undefined, tx)).map(toWorkflow);
  }

  async find(organizationId: number, id: number, tx?: Tx): Promise<WorkflowRecord | null> {
    const [row] = await organizationRows<WorkflowRow>(this.db, 'workflows', COLUMNS, organizationId, id, tx);
    return row ? toWorkflow(row) : null;
  }

  async update(tx: Tx, organizationId: number, id: number, workflow: WorkflowFields, now: number): Promise<WorkflowRecord | null> {
    const current = await this.find(organizationId, id, tx);
    if (!current) return null;
    await this.db.sequelize.query('UPDATE workflows SET name = $name, conditions = $conditions, stages = $stages, is_active = $is_active, updated_at = $now WHERE id = $id', {
      bind: { ...written(workflow), id, now },
      transaction: transactionOf(tx),
    });
    return { ...current, ...workflow, updated_at: isoTime(now) };
  }

  async delete(tx: Tx, organizationId: number, id: number): Promise<boolean> {
    if (!(await this.find(organizationId, id, tx))) return false;
    await this.db.sequelize.query('DELETE FROM workflows WHERE id = $id', { bind: { id }, transaction: transactionOf(tx) });
    return true;
  }

  async lockState(tx: Tx, organizationId: number, reviewId: number): Promise<WorkflowState | null> {
    // Two last votes at once take turns here; on SQLite the writer already does.
    const lock = this.db.sql.lockRows('update');
    const [row] = await this.db.sequelize.query<{ state: string }>(`SELECT state FROM review_workflows WHERE review_id = $reviewId AND organization_id = $organizationId${lock}`, {
      bind: { reviewId, organizationId },
      type: QueryTypes.SELECT,
      transaction: transactionOf(tx),
    });
    return row ? (JSON.parse(row.state) as WorkflowState) : null;
  }

  async saveState(tx: Tx, reviewId: number, organizationId: number, state: WorkflowState, now: number, isNew: boolean): Promise<void> {
    if (isNew) {
      // Part of the create of every review a workflow governs: on PostgreSQL, sent within the create's last statement.
      await insertInTurn(
        this.db,
        {
          sql: 'INSERT INTO review_workflows (review_id, organization_id, state, updated_at) VALUES ($workflow_review_id, $workflow_organization_id, $workflow_state, $workflow_now)',
          bind: { workflow_review_id: reviewId, workflow_organization_id: organizationId, workflow_state: JSON.stringify(state), workflow_now: now },
        },
        transactionOf(tx),
      );
      return;
    }
    await this.db.sequelize.query('UPDATE review_workflows SET state = $state, updated_at = $now WHERE review_id = $reviewId', {
      bind: { reviewId, state: JSON.stringify(state), now },
      transaction: transactionOf(tx),
    });
  }

  async statesOf(reviewIds: readonly number[]): Promise<Map<number, WorkflowState>> {
    if (reviewIds.length === 0) return new Map();
    const rows = await this.db.sequelize.query<{ review_id: number; state: string }>('SELECT review_id, state FROM review_workflows WHERE review_id IN (:reviewIds)', {
      replacements: { reviewIds: [...reviewIds] },
      type: QueryTypes.SELECT,
    });
    return new Map(rows.map((row) => [Number(row.review_id), JSON.parse(row.state) as WorkflowState]));
  }

  async voters(organizationId: number, tx?: Tx): Promise<Voter[]> {
    const bind = { organizationId, active: true };
    const transaction = tx ? transactionOf(tx) : undefined;
    const [people, memberships] = await Promise.all([
      this.db.sequelize.query<{ id: number; name: string; role: UserRole }>('SELECT id, name, role FROM users WHERE organization_id = $organizationId AND is_active = $active ORDER BY id', {
        bind,
        type: QueryTypes.SELECT,
        transaction,
      }),
      this.db.sequelize.query<{ user_id: number; team_id: number }>(
        'SELECT m.user_id, m.team_id FROM team_members m JOIN teams t ON t.id = m.team_id WHERE t.organization_id = $organizationId',
        { bind: { organizationId }, type: QueryTypes.SELECT, transaction },
      ),
    ]);
    return people.map((person) => ({
      id: Number(person.id),
      name: person.name,
      role: person.role,
      team_ids: memberships.filter((membership) => Number(membership.user_id) === Number(person.id)).map((membership) => Number(membership.team_id)),
    }));
  }
}
