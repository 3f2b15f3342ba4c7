import pg from 'pg';
import { Sequelize, type Transaction } from 'sequelize';
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

/** A statement as its connections prepare it: its name, its text with positional parameters, and the `$name` each stands for. */
interface PreparedStatement {
  name: string;
  text: string;
  names: string[];
}

const statements = new Map<string, PreparedStatement>();

function preparedStatementOf(sql: string): PreparedStatement {
  let statement = statements.get(sql);
  if (!statement) {
    const names: string[] = [];
    const text = sql.replace(/\$([A-Za-z_]\w*)/g, (_match, name: string) => {
      if (!names.includes(name)) names.push(name);
      return `$${names.indexOf(name) + 1}`;
    });
    statement = { name: `greenlight_${statements.size + 1}`, text, names };
    statements.set(sql, statement);
  }
  return statement;
}

/**
 * The create path's statements, on the transaction's own connection: through Sequelize each one
 * was formatted, its parameters rewritten and escaped, parsed and planned by PostgreSQL again
 * (a tenth of a create's CPU in a profile); a named statement is parsed once per connection and
 * then only bound. (A pooler in transaction mode must keep prepared statements per server
 * connection, as PgBouncer 1.21 and later do with `max_prepared_statements`.)
 */
async function preparedRow(sql: string, bind: Record<string, unknown>, transaction: Transaction): Promise<Record<string, unknown>> {
  const { name, text, names } = preparedStatementOf(sql);
  const connection = (transaction as unknown as { connection: pg.ClientBase }).connection;
  const result = await connection.query({ name, text, values: names.map((key) => bind[key] ?? null) });
  return result.rows[0] as Record<string, unknown>;
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
    insertReturningId: async (sql, bind, transaction) => Number((await preparedRow(`${sql} RETURNING id`, bind, transaction)).id),
    preparedRow,
    ping: async () => {
      await sequelize.query('SELECT 1');
    },
    close: () => sequelize.close(),
  };
}
