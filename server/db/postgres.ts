import pg from 'pg';
import { Sequelize, Transaction } from 'sequelize';
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

/** The parts of Sequelize's connection manager that lend pool connections. */
interface PostgresConnectionManager {
  getConnection(options?: { type?: 'read' | 'write' }): Promise<pg.ClientBase>;
  releaseConnection(connection: pg.ClientBase): void;
  destroyConnection(connection: pg.ClientBase): Promise<void>;
}

/**
 * A write transaction begun, committed or rolled back with plain statements on a pool
 * connection. Through `sequelize.transaction` each also ran Sequelize's bookkeeping (an id, CLS,
 * hooks, each statement formatted and a stack trace kept): about a twentieth of a create's CPU.
 * The stores still get a Sequelize `Transaction` bound to the connection, for the queries they
 * run through Sequelize; once finished it refuses further queries, as Sequelize's own does. A
 * connection whose statement of the transaction's own failed is in an unknown state: it is
 * closed rather than lent again.
 */
function writeTransactions(sequelize: Sequelize) {
  const manager = sequelize.connectionManager as unknown as PostgresConnectionManager;
  const finish = async (transaction: Transaction, connection: pg.ClientBase, statement: 'COMMIT' | 'ROLLBACK'): Promise<void> => {
    try {
      await connection.query(statement);
      manager.releaseConnection(connection);
    } catch (error) {
      await manager.destroyConnection(connection).catch(() => undefined);
      throw error;
    } finally {
      (transaction as { finished?: string }).finished = statement === 'COMMIT' ? 'commit' : 'rollback';
    }
  };
  return async <T>(work: (transaction: Transaction) => Promise<T>): Promise<T> => {
    const connection = await manager.getConnection({ type: 'write' });
    const transaction = Object.assign(new Transaction(sequelize, {}), { connection });
    try {
      await connection.query('BEGIN');
    } catch (error) {
      await manager.destroyConnection(connection).catch(() => undefined);
      throw error;
    }
    let result: T;
    try {
      result = await work(transaction);
    } catch (error) {
      // The work's own failure is what its caller hears, whatever became of the rollback.
      await finish(transaction, connection, 'ROLLBACK').catch(() => undefined);
      throw error;
    }
    await finish(transaction, connection, 'COMMIT');
    return result;
  };
}

/**
 * The statements every create or authenticated request runs, on the transaction's own
 * connection or one lent by the pool: through Sequelize each one was formatted, its parameters
 * rewritten and escaped, parsed and planned by PostgreSQL again (a tenth of a create's CPU in a
 * profile); a named statement is parsed once per connection and then only bound. (A pooler in
 * transaction mode must keep prepared statements per server connection, as PgBouncer 1.21 and
 * later do with `max_prepared_statements`.)
 */
function preparedRows(sequelize: Sequelize) {
  const manager = sequelize.connectionManager as unknown as PostgresConnectionManager;
  return async <Row extends object>(sql: string, bind: Record<string, unknown>, transaction?: Transaction): Promise<Row[]> => {
    const { name, text, names } = preparedStatementOf(sql);
    const query = { name, text, values: names.map((key) => bind[key] ?? null) };
    if (transaction) return (await (transaction as unknown as { connection: pg.ClientBase }).connection.query(query)).rows as Row[];
    const connection = await manager.getConnection({ type: 'read' });
    try {
      return (await connection.query(query)).rows as Row[];
    } finally {
      manager.releaseConnection(connection);
    }
  };
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
  const selectRows = preparedRows(sequelize);
  const insertReturning: Database['insertReturning'] = (sql, columns, bind, transaction) => selectRows(`${sql} RETURNING ${columns}`, bind, transaction);
  return {
    sequelize,
    sql: POSTGRES,
    location: withoutPassword(url),
    write: watchedWrites(writeTransactions(sequelize), options.diskSpace),
    insertReturningId: async (sql, bind, transaction) => Number((await insertReturning<{ id: number }>(sql, 'id', bind, transaction))[0].id),
    insertReturning,
    selectRows,
    ping: async () => {
      await sequelize.query('SELECT 1');
    },
    close: () => sequelize.close(),
  };
}
