import pg from 'pg';
import { Sequelize, Transaction } from 'sequelize';
import { type CombinedWrites, type ComposedStatement, type Database, type OpenOptions, type Statement, watchedWrites } from './database';
import { POSTGRES } from './dialect';

/**
 * int8 (BIGINT columns, COUNT) and numeric (SUM) arrive from the driver as text, so as not to
 * lose precision past 2^53. Greenlight's are times in milliseconds, sizes and counts, far below
 * that: they are numbers, as on SQLite.
 */
pg.types.setTypeParser(pg.types.builtins.INT8, (value) => Number(value));
pg.types.setTypeParser(pg.types.builtins.NUMERIC, (value) => Number(value));

/** How many connections one process keeps to PostgreSQL where the configuration names none (inspection, tests): `database_pool_size`'s default. */
const DEFAULT_POOL_SIZE = 10;

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
  /** A composed statement's: for each of `names`, which of its binds held it the last time. */
  sources?: number[];
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

/** The prepared query of `sql` with `bind`'s values in its parameters' places. */
function preparedQuery(sql: string, bind: Record<string, unknown>): pg.QueryConfig {
  const { name, text, names } = preparedStatementOf(sql);
  return { name, text, values: names.map((key) => bind[key] ?? null) };
}

/**
 * `preparedQuery` of a composed statement: each parameter's value from the bind that has it.
 * A statement's parts come in the same order every time, so where each value was found is
 * kept and looked in first: a hosted create's 40-odd parameters were otherwise each looked up
 * in bind after bind, a megamorphic property miss at every step.
 */
function composedQuery({ sql, binds }: ComposedStatement): pg.QueryConfig {
  const statement = preparedStatementOf(sql);
  const sources = (statement.sources ??= statement.names.map(() => 0));
  const values = statement.names.map((key, index) => {
    const known = binds[sources[index]]?.[key];
    if (known !== undefined) return known;
    for (let source = 0; source < binds.length; source += 1) {
      const value = binds[source][key];
      if (value !== undefined) {
        sources[index] = source;
        return value;
      }
    }
    return null;
  });
  return { name: statement.name, text: statement.text, values };
}

/** A write transaction as it is sent: begun with its first statement, inserts held back until the next. */
interface PendingWrite {
  connection: pg.ClientBase;
  /** Resolves once BEGIN and what was held back have been sent; null until a statement is. */
  begun: Promise<void> | null;
  carried: Statement[];
  /** Its last statement went alone and committed: nothing more goes out in it. */
  committedAlone: boolean;
}

const pendingWrites = new WeakMap<Transaction, PendingWrite>();

function pendingWriteOf(transaction: Transaction): PendingWrite {
  const pending = pendingWrites.get(transaction);
  if (!pending) throw new Error('not a write transaction of this database');
  return pending;
}

/** The transaction's connection once BEGIN and the inserts held back have gone out before whatever is sent next. */
function begun(pending: PendingWrite): Promise<pg.ClientBase> {
  if (pending.committedAlone) return Promise.reject(new Error('this transaction committed with its last statement: nothing more can be sent in it'));
  pending.begun ??= (async () => {
    await pending.connection.query('BEGIN');
    for (const statement of pending.carried.splice(0)) await pending.connection.query(preparedQuery(statement.sql, statement.bind));
  })();
  return pending.begun.then(() => pending.connection);
}

/** The connection as Sequelize's queries in the transaction see it: each one begins the transaction first. */
function beginningConnection(pending: PendingWrite): pg.ClientBase {
  const query = (...args: unknown[]): void => {
    // Sequelize passes a callback last and wraps it in a promise of its own.
    const callback = args[args.length - 1] as (error: unknown) => void;
    begun(pending)
      .then((connection) => void (connection.query as (...queryArgs: unknown[]) => unknown)(...args))
      .catch(callback);
  };
  return new Proxy(pending.connection, { get: (target, property) => (property === 'query' ? query : Reflect.get(target, property)) });
}

/**
 * Write transactions on pool connections, begun, committed or rolled back with plain
 * statements. Through `sequelize.transaction` each also ran Sequelize's bookkeeping (an id, CLS,
 * hooks, each statement formatted and a stack trace kept): about a twentieth of a create's CPU.
 * The stores get a Sequelize `Transaction` for the queries they run through Sequelize; once
 * finished it refuses further queries, as Sequelize's own does. BEGIN waits for the first
 * statement (`CombinedWrites`): a transaction that sends its one statement alone needs neither
 * BEGIN nor COMMIT. A connection whose BEGIN, COMMIT or ROLLBACK failed is in an unknown state:
 * it is closed rather than lent again.
 */
function writeTransactions(sequelize: Sequelize) {
  const manager = sequelize.connectionManager as unknown as PostgresConnectionManager;
  const finish = async (transaction: Transaction, pending: PendingWrite, statement: 'COMMIT' | 'ROLLBACK'): Promise<void> => {
    try {
      // Nothing begun, nothing to end: every statement sent went alone, committed or refused.
      if (pending.begun) await pending.connection.query(statement);
      manager.releaseConnection(pending.connection);
    } catch (error) {
      await manager.destroyConnection(pending.connection).catch(() => undefined);
      throw error;
    } finally {
      (transaction as { finished?: string }).finished = statement === 'COMMIT' ? 'commit' : 'rollback';
    }
  };
  return async <T>(work: (transaction: Transaction) => Promise<T>): Promise<T> => {
    const pending: PendingWrite = { connection: await manager.getConnection({ type: 'write' }), begun: null, carried: [], committedAlone: false };
    const transaction = Object.assign(new Transaction(sequelize, {}), { connection: beginningConnection(pending) });
    pendingWrites.set(transaction, pending);
    let result: T;
    try {
      result = await work(transaction);
      // Held back for a statement that never came: they go before COMMIT.
      if (pending.carried.length > 0) await begun(pending);
    } catch (error) {
      // The work's own failure is what its caller hears, whatever became of the rollback.
      await finish(transaction, pending, 'ROLLBACK').catch(() => undefined);
      throw error;
    }
    await finish(transaction, pending, 'COMMIT');
    return result;
  };
}

/** `CombinedWrites` on the transactions of `writeTransactions`. */
const combinedWrites: CombinedWrites = {
  async readAhead<Row extends object>(sql: string, bind: Record<string, unknown>, transaction: Transaction): Promise<Row[]> {
    return (await pendingWriteOf(transaction).connection.query(preparedQuery(sql, bind))).rows as Row[];
  },
  async carry(transaction, statement) {
    const pending = pendingWriteOf(transaction);
    if (pending.begun) await (await begun(pending)).query(preparedQuery(statement.sql, statement.bind));
    else pending.carried.push(statement);
  },
  async last<Row extends object>(transaction: Transaction, compose: (carried: readonly Statement[]) => ComposedStatement, alone: boolean): Promise<Row[]> {
    const pending = pendingWriteOf(transaction);
    const query = composedQuery(compose(pending.begun ? [] : pending.carried.splice(0)));
    if (alone && !pending.begun) {
      pending.committedAlone = true;
      (transaction as { finished?: string }).finished = 'commit';
      return (await pending.connection.query(query)).rows as Row[];
    }
    return (await (await begun(pending)).query(query)).rows as Row[];
  },
};

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
    const query = preparedQuery(sql, bind);
    if (transaction) return (await (await begun(pendingWriteOf(transaction))).query(query)).rows as Row[];
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
    pool: { max: options.poolSize ?? DEFAULT_POOL_SIZE, min: 0, idle: 10_000, acquire: 30_000 },
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
    combined: combinedWrites,
    ping: async () => {
      await sequelize.query('SELECT 1');
    },
    close: () => sequelize.close(),
  };
}
