import { DataTypes, type QueryInterface } from 'sequelize';

/**
 * Evaluation suites and their runs (hosted edition), and auto-decide routing rules with what
 * they left on the reviews they met: a shadow rule's mark, an enforcing rule's audit sample.
 * The marks have a table of their own, like workflow states, so the reviews table is untouched.
 */
export async function up({ context: queryInterface }: { context: QueryInterface }): Promise<void> {
  await queryInterface.createTable('evals', {
    id: { type: DataTypes.INTEGER, primaryKey: true, autoIncrement: true },
    organization_id: { type: DataTypes.INTEGER, allowNull: false, references: { model: 'organizations', key: 'id' } },
    name: { type: DataTypes.STRING(100), allowNull: false },
    // JSON: {task_type?, framework?, agent_id?, since?, until?}.
    filters: { type: DataTypes.TEXT, allowNull: false, defaultValue: '{}' },
    target_precision: { type: DataTypes.DOUBLE, allowNull: false },
    confidence: { type: DataTypes.DOUBLE, allowNull: false },
    // JSON: the thresholds, fixed when the suite is made.
    grid: { type: DataTypes.TEXT, allowNull: false },
    min_samples: { type: DataTypes.INTEGER, allowNull: false },
    schedule: { type: DataTypes.STRING(16), allowNull: true },
    // When a scheduled suite runs next; claimed and moved on in one transaction.
    next_run_at: { type: DataTypes.BIGINT, allowNull: true },
    created_at: { type: DataTypes.BIGINT, allowNull: false },
    updated_at: { type: DataTypes.BIGINT, allowNull: false },
  });
  await queryInterface.addIndex('evals', ['organization_id'], { name: 'evals_organization' });
  await queryInterface.addIndex('evals', ['next_run_at'], { name: 'evals_due' });
  await queryInterface.createTable('eval_runs', {
    id: { type: DataTypes.INTEGER, primaryKey: true, autoIncrement: true },
    eval_id: { type: DataTypes.INTEGER, allowNull: false, references: { model: 'evals', key: 'id' }, onDelete: 'CASCADE' },
    organization_id: { type: DataTypes.INTEGER, allowNull: false },
    status: { type: DataTypes.STRING(16), allowNull: false },
    // manual or schedule.
    triggered_by: { type: DataTypes.STRING(16), allowNull: false },
    started_at: { type: DataTypes.BIGINT, allowNull: false },
    finished_at: { type: DataTypes.BIGINT, allowNull: true },
    // JSON: the result document, once it succeeded.
    result: { type: DataTypes.TEXT, allowNull: true },
    error: { type: DataTypes.TEXT, allowNull: true },
  });
  await queryInterface.addIndex('eval_runs', ['eval_id', 'id'], { name: 'eval_runs_eval' });

  await queryInterface.addColumn('routing_rules', 'auto_decide', { type: DataTypes.STRING(16), allowNull: true });
  await queryInterface.addColumn('routing_rules', 'mode', { type: DataTypes.STRING(16), allowNull: true });
  await queryInterface.addColumn('routing_rules', 'audit_sample_rate', { type: DataTypes.DOUBLE, allowNull: true });
  await queryInterface.createTable('review_rule_marks', {
    review_id: { type: DataTypes.INTEGER, primaryKey: true, references: { model: 'reviews', key: 'id' }, onDelete: 'CASCADE' },
    organization_id: { type: DataTypes.INTEGER, allowNull: false },
    rule_id: { type: DataTypes.INTEGER, allowNull: false },
    // shadow: the rule only watched; audit_sample: it enforces, and drew this review for a person.
    kind: { type: DataTypes.STRING(16), allowNull: false },
    // approve or reject: what the rule would have done.
    decision: { type: DataTypes.STRING(16), allowNull: false },
    // The audit sample's rate when it was drawn: a run weighs the review by its inverse.
    sample_rate: { type: DataTypes.DOUBLE, allowNull: true },
  });
  await queryInterface.addIndex('review_rule_marks', ['rule_id'], { name: 'review_rule_marks_rule' });

  // An evaluation run counts an organization's reviews by what this index holds, without reading
  // the rows (a million of them are half a gigabyte of actions and metadata).
  await queryInterface.addIndex('reviews', ['organization_id', 'status', 'task_type', 'agent_id', 'confidence_score', 'created_at', 'decided_at'], { name: 'reviews_evaluation' });
  // The few decisions no person made (expiry, automatic rules), which a run sets apart.
  await queryInterface.sequelize.query(`CREATE INDEX decisions_by_system ON decisions (review_id) WHERE ${SYSTEM_DECISION}`);
}

/** A decision no person made: the policy's on expiry, or an automatic rule's. The evaluation store repeats it word for word, so that its queries use the index. */
const SYSTEM_DECISION = "(reviewer_name = 'policy:expired' OR reviewer_name LIKE 'rule:%')";

export async function down({ context: queryInterface }: { context: QueryInterface }): Promise<void> {
  await queryInterface.sequelize.query('DROP INDEX decisions_by_system');
  await queryInterface.removeIndex('reviews', 'reviews_evaluation');
  await queryInterface.dropTable('review_rule_marks');
  await queryInterface.removeColumn('routing_rules', 'audit_sample_rate');
  await queryInterface.removeColumn('routing_rules', 'mode');
  await queryInterface.removeColumn('routing_rules', 'auto_decide');
  await queryInterface.dropTable('eval_runs');
  await queryInterface.dropTable('evals');
}
