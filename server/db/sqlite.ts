import fs from 'node:fs';
import path from 'node:path';
import sqlite3 from 'sqlite3';
import { Sequelize, Transaction } from 'sequelize';
import { type Database, type OpenOptions, selectThroughSequelize, watchedWrites, type WriteOptions } from './database';
import { SQLITE } from './dialect';

/**
 * Applied to every SQLite connection, not once: Sequelize's SQLite dialect opens a fresh
 * connection for each transaction, and `busy_timeout`, `synchronous` and `foreign_keys` are
 * per-connection settings. WAL lets readers proceed while one writer commits;
 * `synchronous=FULL` makes a commit durable before we acknowledge it (a 201 or 200 means the
 * row survives a crash or power loss).
 */
const CONNECTION_PRAGMAS = [
  'PRAGMA journal_mode = WAL',
  'PRAGMA synchronous = FULL',
  'PRAGMA busy_timeout = 5000',
  'PRAGMA foreign_keys = ON',
].join(';\n');

/** Inspection (`greenlight status`, `logs`) must not change the file, not even its journal mode. */
const READ_ONLY_PRAGMAS = 'PRAGMA busy_timeout = 5000; PRAGMA query_only = ON';

type OpenCallback = (error: Error | null) => void;

/** The `sqlite3` module, except that every database it opens runs `pragmas` first. */
function sqlite3WithPragmas(pragmas: string): typeof sqlite3 {
  function Database(filename: string, mode: number, callback: OpenCallback): sqlite3.Database {
    const connection = new sqlite3.Database(filename, mode, (openError) => {
      if (openError) return callback(openError);
      connection.exec(pragmas, (pragmaError) => callback(pragmaError ?? null));
    });
    return connection;
  }
  return Object.assign(Object.create(sqlite3) as typeof sqlite3, { Database });
}

function exec(connection: sqlite3.Database, sql: string): Promise<void> {
  return new Promise((resolve, reject) => connection.exec(sql, (error) => (error ? reject(error) : resolve())));
}

type Work<T> = (transaction: Transaction) => Promise<T>;

/** The connection Sequelize runs a transaction's statements on. */
function connectionOf(transaction: Transaction): sqlite3.Database {
  return (transaction as unknown as { connection: sqlite3.Database }).connection;
}

interface QueuedWrite {
  work: Work<unknown>;
  rerunnable: boolean;
  resolve(value: unknown): void;
  reject(error: unknown): void;
}

/** Enough to share one commit among every request a burst brings, small enough to keep each wait short. */
const MAX_WRITES_PER_COMMIT = 64;

/**
 * Serialises this process's write transactions and commits the writes that queued up while
 * the previous commit was on disk together (group commit). SQLite allows one writer at a
 * time, and with synchronous=FULL every commit waits for the disk: one commit per request
 * made that wait the ceiling of create throughput. Each write still runs in a savepoint of
 * its own, so one that fails rolls back alone, and its caller hears of success only after
 * the shared COMMIT is durable.
 *
 * Queueing here rather than in SQLite also keeps `BEGIN IMMEDIATE` from waiting inside
 * SQLite's busy handler, which would park libuv's few worker threads in sleeps;
 * `busy_timeout` remains for other processes (the CLI) touching the same file.
 */
class WriteQueue {
  private readonly queued: QueuedWrite[] = [];
  private draining = false;
  private idle: Promise<void> = Promise.resolve();
  private markIdle: () => void = () => {};

  private readonly writer: WriterTransactions;

  constructor(sequelize: Sequelize) {
    this.writer = new WriterTransactions(sequelize);
  }

  run<T>(work: Work<T>, options: WriteOptions = {}): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.queued.push({ work, rerunnable: options.rerunnable ?? false, resolve: resolve as (value: unknown) => void, reject });
      if (!this.draining) void this.drain();
    });
  }

  /** Resolves once every write queued so far has finished. */
  settled(): Promise<void> {
    return this.idle;
  }

  private async drain(): Promise<void> {
    this.draining = true;
    this.idle = new Promise((resolve) => (this.markIdle = resolve));
    while (this.queued.length > 0) await this.commitTogether(this.queued.splice(0, MAX_WRITES_PER_COMMIT));
    this.draining = false;
    this.markIdle();
  }

  private async commitTogether(batch: QueuedWrite[]): Promise<void> {
    if (batch.length > 1 && batch.every((write) => write.rerunnable) && (await this.commitWithoutSavepoints(batch))) return;
    await this.commitWithSavepoints(batch);
  }

  /**
   * Writes that may run again share a commit without a savepoint each: one trip through the
   * thread pool less per write. Returns false, with everything rolled back and no caller
   * answered, when one of them failed: the batch then runs again with savepoints, so that one
   * fails alone.
   */
  private async commitWithoutSavepoints(batch: QueuedWrite[]): Promise<boolean> {
    let transaction: Transaction;
    try {
      transaction = await this.writer.begin();
    } catch (error) {
      for (const write of batch) write.reject(error);
      return true;
    }
    const values: unknown[] = [];
    for (const { work } of batch) {
      try {
        values.push(await work(transaction));
      } catch {
        await this.writer.rollback(transaction);
        return false;
      }
    }
    try {
      await this.writer.commit(transaction);
    } catch (error) {
      for (const write of batch) write.reject(error);
      return true;
    }
    batch.forEach((write, i) => write.resolve(values[i]));
    return true;
  }

  private async commitWithSavepoints(batch: QueuedWrite[]): Promise<void> {
    const outcomes: Array<{ ok: true; value: unknown } | { ok: false; error: unknown }> = [];
    let transaction: Transaction | undefined;
    let committing = false;
    try {
      transaction = await this.writer.begin();
      const connection = connectionOf(transaction);
      // Alone in its commit, a write needs no savepoint: its failure rolls back the transaction.
      if (batch.length === 1) outcomes.push({ ok: true, value: await batch[0].work(transaction) });
      else {
        for (const { work } of batch) {
          // Straight to the connection, and not awaited before the write starts: an exec holds
          // the connection until it completes, so the write's statements queue behind it. That
          // saves a round trip through the thread pool per write. Should the savepoint itself
          // fail, awaiting it below fails the whole transaction.
          const savepoint = exec(connection, 'SAVEPOINT write');
          savepoint.catch(() => undefined);
          try {
            const value = await work(transaction);
            await savepoint;
            outcomes.push({ ok: true, value });
          } catch (error) {
            await savepoint;
            // The newest savepoint of that name is this write's: only its changes are undone.
            await exec(connection, 'ROLLBACK TO write');
            outcomes.push({ ok: false, error });
          }
        }
      }
      committing = true;
      await this.writer.commit(transaction);
    } catch (error) {
      if (transaction && !committing) await this.writer.rollback(transaction);
      for (const write of batch) write.reject(error);
      return;
    }
    batch.forEach((write, i) => {
      const outcome = outcomes[i];
      if (outcome.ok) write.resolve(outcome.value);
      else write.reject(outcome.error);
    });
  }
}

/**
 * Begins, commits and rolls back the write transactions on the one writer connection with plain
 * statements. Through `sequelize.transaction` each commit also ran Sequelize's bookkeeping (an id,
 * hooks, a stack trace formatted per statement): a tenth of the CPU a create cost. The stores still
 * get a Sequelize `Transaction`, bound to the writer connection, for the queries they run through
 * Sequelize; once finished it refuses further queries, as Sequelize's own does.
 */
class WriterTransactions {
  constructor(private readonly sequelize: Sequelize) {}

  async begin(): Promise<Transaction> {
    const connection = await (this.sequelize.connectionManager as unknown as SqliteConnectionManager).getConnection({ uuid: WRITER });
    await exec(connection as sqlite3.Database, 'BEGIN IMMEDIATE');
    return Object.assign(new Transaction(this.sequelize, {}), { connection });
  }

  async commit(transaction: Transaction): Promise<void> {
    await this.finish(transaction, 'COMMIT', 'commit');
  }

  /** Never throws: the batch already failed for a reason of its own, which its callers hear. */
  async rollback(transaction: Transaction): Promise<void> {
    await this.finish(transaction, 'ROLLBACK', 'rollback').catch(() => undefined);
  }

  /** A connection whose COMMIT or ROLLBACK failed is in an unknown state: it is closed, and the next write opens another. */
  private async finish(transaction: Transaction, statement: string, state: 'commit' | 'rollback'): Promise<void> {
    const connection = connectionOf(transaction);
    try {
      await exec(connection, statement);
    } catch (error) {
      await (this.sequelize.connectionManager as unknown as SqliteConnectionManager).destroyConnection(connection).catch(() => undefined);
      throw error;
    } finally {
      (transaction as { finished?: string }).finished = state;
    }
  }
}

/**
 * The inserts every create runs, prepared once on the writer connection. Through Sequelize each
 * one prepared a new statement, bound, stepped and finalized it (several trips through libuv's
 * thread pool, in turn with every other request's work on the main thread) and formatted a
 * stack trace; writes take turns, so that chain bounded create throughput. A prepared statement
 * binds and steps in one trip.
 */
class PreparedInserts {
  private readonly byConnection = new WeakMap<sqlite3.Database, Map<string, Promise<PreparedInsert>>>();

  async run(connection: sqlite3.Database, sql: string, bind: Record<string, unknown>): Promise<number> {
    const { statement, values } = await this.bound(connection, sql, bind);
    return new Promise<number>((resolve, reject) => {
      statement.run(values, function (this: sqlite3.RunResult, error: Error | null) {
        if (error) reject(error);
        else resolve(this.lastID);
      });
    });
  }

  /** For an INSERT … RETURNING: the rows it returns. */
  async all<Row>(connection: sqlite3.Database, sql: string, bind: Record<string, unknown>): Promise<Row[]> {
    const { statement, values } = await this.bound(connection, sql, bind);
    return new Promise<Row[]>((resolve, reject) => statement.all(values, (error: Error | null, rows: Row[]) => (error ? reject(error) : resolve(rows))));
  }

  /** Finalizes the statements of `connection`: SQLite will not close a connection that still has some. */
  async release(connection: SqliteConnection): Promise<void> {
    const statements = this.byConnection.get(connection as sqlite3.Database);
    if (!statements) return;
    this.byConnection.delete(connection as sqlite3.Database);
    for (const prepared of statements.values()) {
      const insert = await prepared.catch(() => null);
      if (insert) await new Promise<void>((resolve) => insert.statement.finalize(() => resolve()));
    }
  }

  private async bound(connection: sqlite3.Database, sql: string, bind: Record<string, unknown>): Promise<{ statement: sqlite3.Statement; values: unknown[] }> {
    const { statement, names } = await this.prepared(connection, sql);
    // By position: binding an array costs the native side far less than looking up names.
    return { statement, values: names.map((name) => bind[name] ?? null) };
  }

  private prepared(connection: sqlite3.Database, sql: string): Promise<PreparedInsert> {
    let statements = this.byConnection.get(connection);
    if (!statements) this.byConnection.set(connection, (statements = new Map()));
    let prepared = statements.get(sql);
    if (!prepared) {
      prepared = new Promise((resolve, reject) => {
        const statement = connection.prepare(sql, (error) => (error ? reject(error) : resolve({ statement, names: parameterNames(sql) })));
      });
      // A statement that failed to prepare is tried afresh next time rather than failing forever.
      prepared.catch(() => statements.delete(sql));
      statements.set(sql, prepared);
    }
    return prepared;
  }
}

interface PreparedInsert {
  statement: sqlite3.Statement;
  /** The `$name` parameters in the order SQLite numbers them: by first appearance. */
  names: string[];
}

function parameterNames(sql: string): string[] {
  return [...new Set(Array.from(sql.matchAll(/\$(\w+)/g), (match) => match[1]))];
}

interface SqliteConnection {
  close(callback?: (error: Error | null) => void): void;
}

/** The parts of Sequelize's SQLite connection manager that decide which connection a query uses. */
interface SqliteConnectionManager {
  connections: Record<string, SqliteConnection>;
  getConnection(options?: { uuid?: string }): Promise<SqliteConnection>;
  releaseConnection(connection: SqliteConnection, force?: boolean): void;
  destroyConnection(connection: SqliteConnection): Promise<void>;
}

const WRITER = 'writer';

/**
 * Sequelize's SQLite dialect opens a new connection for every transaction and closes it
 * after: a file open, the pragmas and a schema parse on every write, which the profile of a
 * create showed as its largest cost. Writes already take turns (`WriteQueue`), so one
 * long-lived connection carries every transaction; reads keep the shared default one. A
 * connection whose COMMIT or ROLLBACK failed is in an unknown state and is replaced.
 */
function reuseOneWriterConnection(sequelize: Sequelize, prepared: PreparedInserts): void {
  const manager = sequelize.connectionManager as unknown as SqliteConnectionManager;
  const open = manager.getConnection.bind(manager);
  const release = manager.releaseConnection.bind(manager);
  const destroy = manager.destroyConnection.bind(manager);
  const isWriter = (connection: SqliteConnection): boolean => manager.connections[WRITER] === connection;
  manager.getConnection = (options = {}) => open(options.uuid && options.uuid !== 'default' ? { ...options, uuid: WRITER } : options);
  manager.releaseConnection = (connection, force) => {
    if (!isWriter(connection)) release(connection, force);
  };
  manager.destroyConnection = async (connection) => {
    if (!isWriter(connection)) return destroy(connection);
    delete manager.connections[WRITER];
    await prepared.release(connection);
    await new Promise<void>((resolve) => connection.close(() => resolve()));
  };
}

/** Tries to close a connection at most this many times while SQLite finds statements of it unfinished. */
const CLOSE_ATTEMPTS = 50;

/**
 * Closes `connection` once the writes queued so far have finished and its prepared inserts are
 * finalized. A write that work already answered may still start meanwhile — a long-poll's wait
 * is removed after its agent was answered — and prepare a statement again; SQLite then refuses
 * to close (SQLITE_BUSY), so the write is let finish and the close tried again.
 */
async function closeOnceWritesSettle(connection: SqliteConnection, writes: WriteQueue, prepared: PreparedInserts): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    await writes.settled();
    await prepared.release(connection);
    try {
      await new Promise<void>((resolve, reject) => connection.close((error) => (error ? reject(error) : resolve())));
      return;
    } catch (error) {
      if ((error as { code?: string }).code !== 'SQLITE_BUSY' || attempt === CLOSE_ATTEMPTS) throw error;
      await new Promise((resolve) => setImmediate(resolve));
    }
  }
}

/**
 * The embedded database: one SQLite file that this process owns. Writes take turns in the
 * process and share commits (`WriteQueue`); a 201 or 200 means the row is on disk.
 */
export function openSqlite(file: string, options: OpenOptions = {}): Database {
  if (!options.readOnly) fs.mkdirSync(path.dirname(file), { recursive: true });
  const sequelize = new Sequelize({
    dialect: 'sqlite',
    storage: file,
    dialectModule: sqlite3WithPragmas(options.readOnly ? READ_ONLY_PRAGMAS : CONNECTION_PRAGMAS),
    dialectOptions: options.readOnly ? { mode: sqlite3.OPEN_READONLY } : undefined,
    logging: false,
    transactionType: Transaction.TYPES.IMMEDIATE,
    define: { timestamps: false, underscored: true, freezeTableName: true },
  });
  const prepared = new PreparedInserts();
  if (!options.readOnly) reuseOneWriterConnection(sequelize, prepared);
  const writes = new WriteQueue(sequelize);
  return {
    sequelize,
    sql: SQLITE,
    location: file,
    write: watchedWrites((work, workOptions) => writes.run(work, workOptions), options.diskSpace),
    insertReturningId: (sql, bind, transaction) => prepared.run(connectionOf(transaction), sql, bind),
    insertReturning: (sql, columns, bind, transaction) => prepared.all(connectionOf(transaction), `${sql} RETURNING ${columns}`, bind),
    selectRows: selectThroughSequelize(sequelize),
    ping: async () => {
      await sequelize.query('SELECT 1');
    },
    // Writes still queued (their clients may be gone) finish before the connections close.
    close: async () => {
      const { connections } = sequelize.connectionManager as unknown as SqliteConnectionManager;
      // Sequelize would close its connections all at once, each on a thread of its own, where each
      // may still find another open and none folds the write-ahead log into the file. One after
      // another, the last closes alone: a stopped server leaves one complete file behind.
      for (const [key, connection] of Object.entries(connections)) {
        await closeOnceWritesSettle(connection, writes, prepared);
        delete connections[key];
      }
      await sequelize.close();
    },
  };
}
