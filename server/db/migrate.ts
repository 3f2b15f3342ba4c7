import { type QueryInterface, QueryTypes, type Sequelize } from 'sequelize';
import { SequelizeStorage, Umzug } from 'umzug';
import * as reviewsAndDecisions from './migrations/0001-reviews-and-decisions';
import * as feedbackAndAttachments from './migrations/0002-feedback-and-attachments';
import * as statisticsIndexes from './migrations/0003-statistics-indexes';
import * as queueOrder from './migrations/0004-queue-order';
import * as reviewPolicy from './migrations/0005-review-policy';
import * as statisticsTallies from './migrations/0006-statistics-tallies';
import * as idempotencyKeys from './migrations/0007-idempotency-keys';

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
];

const MIGRATION_TABLE = 'schema_migrations';

function migrator(sequelize: Sequelize): Umzug<QueryInterface> {
  return new Umzug({
    migrations: MIGRATIONS,
    context: sequelize.getQueryInterface(),
    storage: new SequelizeStorage({ sequelize, tableName: MIGRATION_TABLE }),
    logger: undefined,
  });
}

/** Applies every migration not yet applied; returns their names. */
export async function migrate(sequelize: Sequelize): Promise<string[]> {
  const applied = await migrator(sequelize).up();
  return applied.map((m) => m.name);
}

/**
 * Migrations not yet applied, read without writing anything (Umzug's own check creates its
 * table when missing, which a read-only inspection must not do).
 */
export async function pendingMigrations(sequelize: Sequelize): Promise<string[]> {
  const [table] = await sequelize.query(`SELECT name FROM sqlite_master WHERE type = 'table' AND name = '${MIGRATION_TABLE}'`, {
    type: QueryTypes.SELECT,
  });
  const applied = table
    ? new Set((await sequelize.query<{ name: string }>(`SELECT name FROM ${MIGRATION_TABLE}`, { type: QueryTypes.SELECT })).map((r) => r.name))
    : new Set<string>();
  return MIGRATIONS.map((m) => m.name).filter((name) => !applied.has(name));
}
