import pg from 'pg';
import { QueryTypes, Sequelize } from 'sequelize';
import { type Database, type OpenOptions, watchedWrites } from './database';
import { POSTGRES } from './dialect';

/**
 * int8 (BIGINT columns, COUNT) and numeric (SUM) arrive from the driver as text, so as not to
 * lose precision past 2^53. Greenlight's are times in milliseconds, sizes and counts, far below
 * that: they are numbers, as on SQLite.
 */
pg.types.setTypeParser(pg.types.builtins.INT8, (value) => Number(value));
pg.types.setTypeParser(pg.types.builtins.NUMERIC, (value) => Number(value));

/** How many connections one process keeps to PostgreSQL. */
const POOL_SIZE = 10;

/** The URL as a person may see it: without its password. */
export function withoutPassword(url: string): string {
  const parsed = new URL(url);
  if (parsed.password) parsed.password = '***';
  return parsed.toString();
}

/**
 * PostgreSQL, shared by any number of API processes: a pool of connections, each write its
 * own transaction (PostgreSQL serialises conflicting rows itself), committed before it resolves.
 */
export function openPostgres(url: string, options: OpenOptions = {}): Database {
  const sequelize = new Sequelize(url, {
    dialect: 'postgres',
    dialectModule: pg,
    logging: false,
    pool: { max: POOL_SIZE, min: 0, idle: 10_000, acquire: 30_000 },
    // Inspection (`greenlight status`, `logs`) must not change anything.
    dialectOptions: options.readOnly ? { options: '-c default_transaction_read_only=on' } : undefined,
    define: { timestamps: false, underscored: true, freezeTableName: true },
  });
  return {
    sequelize,
    sql: POSTGRES,
    location: withoutPassword(url),
    write: watchedWrites((work) => sequelize.transaction(work), options.diskSpace),
    insertReturningId: async (sql, bind, transaction) => {
      const [rows] = await sequelize.query(`${sql} RETURNING id`, { bind, type: QueryTypes.INSERT, transaction });
      return Number((rows as unknown as Array<{ id: number | string }>)[0].id);
    },
    ping: async () => {
      await sequelize.query('SELECT 1');
    },
    close: () => sequelize.close(),
  };
}
