import { QueryTypes, type Sequelize } from 'sequelize';
import * as reviewsAndDecisions from './migrations/0001-reviews-and-decisions';
import * as feedbackAndAttachments from './migrations/0002-feedback-and-attachments';
import * as statisticsIndexes from './migrations/0003-statistics-indexes';
import * as queueOrder from './migrations/0004-queue-order';
import * as reviewPolicy from './migrations/0005-review-policy';
import * as statisticsTallies from './migrations/0006-statistics-tallies';
import * as idempotencyKeys from './migrations/0007-idempotency-keys';
import * as outbox from './migrations/0008-outbox';
import * as organizations from './migrations/0009-organizations';
import * as agents from './migrations/0010-agents';
import * as auditLog from './migrations/0011-audit-log';
import * as usersAndTeams from './migrations/0012-users-and-teams';
import * as signIn from './migrations/0013-sign-in';
import * as routingRules from './migrations/0014-routing-rules';
import * as workflows from './migrations/0015-workflows';
import * as webhooks from './migrations/0016-webhooks';
import * as auditHead from './migrations/0017-audit-head';
import * as webhookDeliveryQueue from './migrations/0018-webhook-delivery-queue';
import * as reviewWaits from './migrations/0019-review-waits';
import * as agentNames from './migrations/0020-agent-names';
import * as chatMessages from './migrations/0021-chat-messages';
import * as receiptKeys from './migrations/0022-receipt-keys';
import * as evaluations from './migrations/0023-evaluations';
import * as tallySlots from './migrations/0024-tally-slots';
import * as slackRuleChannels from './migrations/0025-slack-rule-channels-and-shown-messages';
import * as talliesAtCommit from './migrations/0026-tallies-at-commit';
import * as auditAtCommit from './migrations/0027-audit-at-commit';
import * as leanAuditIndexes from './migrations/0028-lean-audit-indexes';
import * as auditLinkedAfterCommit from './migrations/0029-audit-linked-after-commit';

/**
 * Listed explicitly rather than globbed so the same list works from TypeScript sources,
 * compiled output and a packaged app.
 */
export const MIGRATIONS = [
  { name: '0001-reviews-and-decisions', ...reviewsAndDecisions },
  { name: '0002-feedback-and-attachments', ...feedbackAndAttachments },
  { name: '0003-statistics-indexes', ...statisticsIndexes },
  { name: '0004-queue-order', up: queueOrder.up, down: queueOrder.down },
  { name: '0005-review-policy', up: reviewPolicy.up, down: reviewPolicy.down },
  { name: '0006-statistics-tallies', up: statisticsTallies.up, down: statisticsTallies.down },
  { name: '0007-idempotency-keys', up: idempotencyKeys.up, down: idempotencyKeys.down },
  { name: '0008-outbox', up: outbox.up, down: outbox.down },
  { name: '0009-organizations', up: organizations.up, down: organizations.down },
  { name: '0010-agents', up: agents.up, down: agents.down },
  { name: '0011-audit-log', up: auditLog.up, down: auditLog.down },
  { name: '0012-users-and-teams', up: usersAndTeams.up, down: usersAndTeams.down },
  { name: '0013-sign-in', up: signIn.up, down: signIn.down },
  { name: '0014-routing-rules', up: routingRules.up, down: routingRules.down },
  { name: '0015-workflows', up: workflows.up, down: workflows.down },
  { name: '0016-webhooks', up: webhooks.up, down: webhooks.down },
  { name: '0017-audit-head', up: auditHead.up, down: auditHead.down },
  { name: '0018-webhook-delivery-queue', up: webhookDeliveryQueue.up, down: webhookDeliveryQueue.down },
  { name: '0019-review-waits', up: reviewWaits.up, down: reviewWaits.down },
  { name: '0020-agent-names', up: agentNames.up, down: agentNames.down },
  { name: '0021-chat-messages', up: chatMessages.up, down: chatMessages.down },
  { name: '0022-receipt-keys', up: receiptKeys.up, down: receiptKeys.down },
  { name: '0023-evaluations', up: evaluations.up, down: evaluations.down },
  { name: '0024-tally-slots', up: tallySlots.up, down: tallySlots.down },
  { name: '0025-slack-rule-channels-and-shown-messages', up: slackRuleChannels.up, down: slackRuleChannels.down },
  { name: '0026-tallies-at-commit', up: talliesAtCommit.up, down: talliesAtCommit.down },
  { name: '0027-audit-at-commit', up: auditAtCommit.up, down: auditAtCommit.down },
  { name: '0028-lean-audit-indexes', up: leanAuditIndexes.up, down: leanAuditIndexes.down },
  { name: '0029-audit-linked-after-commit', up: auditLinkedAfterCommit.up, down: auditLinkedAfterCommit.down },
];

const MIGRATION_TABLE = 'schema_migrations';

/** Any number, the same in every process: the advisory lock PostgreSQL holds while one of them migrates. */
const MIGRATION_LOCK = 474_201_001;

export interface MigrateOptions {
  /** Stop after this migration (tests that build an old schema first). */
  to?: string;
}

/**
 * Applies every migration not yet applied, in order, each recorded in `schema_migrations` once
 * it has run (the table and column Umzug's Sequelize storage used, so existing databases carry
 * on); returns their names. A runner of our own rather than Umzug: Umzug brings its command-line
 * toolkit with it, about 5 MB a server would hold for the rest of its life after migrating once.
 * On PostgreSQL, processes that start together take turns (an advisory lock held by a
 * transaction of its own): the first migrates, the others then find nothing left to do.
 */
export async function migrate(sequelize: Sequelize, options: MigrateOptions = {}): Promise<string[]> {
  if ((await pendingMigrations(sequelize)).length === 0) return [];
  if (sequelize.getDialect() !== 'postgres') return applyPending(sequelize, options);
  return sequelize.transaction(async (transaction) => {
    await sequelize.query(`SELECT pg_advisory_xact_lock(${MIGRATION_LOCK})`, { transaction });
    return applyPending(sequelize, options);
  });
}

async function applyPending(sequelize: Sequelize, { to }: MigrateOptions): Promise<string[]> {
  if (to !== undefined && !MIGRATIONS.some((m) => m.name === to)) throw new Error(`no migration is called ${to}`);
  await sequelize.query(`CREATE TABLE IF NOT EXISTS ${MIGRATION_TABLE} (name VARCHAR(255) NOT NULL PRIMARY KEY)`);
  const pending = new Set(await pendingMigrations(sequelize));
  const applied: string[] = [];
  const context = sequelize.getQueryInterface();
  for (const migration of MIGRATIONS) {
    if (pending.has(migration.name)) {
      try {
        await migration.up({ context });
      } catch (error) {
        throw new Error(`migration ${migration.name} failed: ${(error as Error).message}`, { cause: error });
      }
      await sequelize.query(`INSERT INTO ${MIGRATION_TABLE} (name) VALUES (?)`, { replacements: [migration.name] });
      applied.push(migration.name);
    }
    if (migration.name === to) break;
  }
  return applied;
}

/**
 * Migrations not yet applied, read without writing anything: `migrate` creates its table when
 * missing, which a read-only inspection must not do.
 */
export async function pendingMigrations(sequelize: Sequelize): Promise<string[]> {
  const tables = (await sequelize.getQueryInterface().showAllTables()) as Array<string | { tableName: string }>;
  const hasTable = tables.some((table) => (typeof table === 'string' ? table : table.tableName) === MIGRATION_TABLE);
  const applied = hasTable
    ? new Set((await sequelize.query<{ name: string }>(`SELECT name FROM ${MIGRATION_TABLE}`, { type: QueryTypes.SELECT })).map((r) => r.name))
    : new Set<string>();
  return MIGRATIONS.map((m) => m.name).filter((name) => !applied.has(name));
}
