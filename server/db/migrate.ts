import type { QueryInterface, Sequelize } from 'sequelize';
import { SequelizeStorage, Umzug } from 'umzug';
import * as reviewsAndDecisions from './migrations/0001-reviews-and-decisions';

/**
 * Listed explicitly rather than globbed so the same list works from TypeScript sources,
 * compiled output and a packaged app.
 */
const MIGRATIONS = [{ name: '0001-reviews-and-decisions', ...reviewsAndDecisions }];

function migrator(sequelize: Sequelize): Umzug<QueryInterface> {
  return new Umzug({
    migrations: MIGRATIONS,
    context: sequelize.getQueryInterface(),
    storage: new SequelizeStorage({ sequelize, tableName: 'schema_migrations' }),
    logger: undefined,
  });
}

/** Applies every migration not yet applied; returns their names. */
export async function migrate(sequelize: Sequelize): Promise<string[]> {
  const applied = await migrator(sequelize).up();
  return applied.map((m) => m.name);
}

export async function pendingMigrations(sequelize: Sequelize): Promise<string[]> {
  return (await migrator(sequelize).pending()).map((m) => m.name);
}
