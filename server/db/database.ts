import { QueryTypes, type Sequelize, type Transaction, UniqueConstraintError } from 'sequelize';
import type { WorkOptions } from '../domain/shared/unit-of-work';
import type { SqlDialect } from './dialect';
import { type DiskSpace, isOutOfSpace } from '../system/disk-space';

/** How a write transaction may be run: who makes the change is the unit of work's to know. */
export type WriteOptions = Pick<WorkOptions, 'rerunnable'>;

/** A statement that has to run in a transaction, its parameters named `$name`. */
export interface Statement {
  sql: string;
  bind: Record<string, unknown>;
}

/**
 * A statement written from several, each part's parameters in a `bind` of its own (no two
 * sharing a name unless they share its value): a parameter takes its value from a bind that
 * has it. Merging them would build a large object for every create.
 */
export interface ComposedStatement {
  sql: string;
  binds: ReadonlyArray<Record<string, unknown>>;
}

/** One database, whichever kind: what the stores and migrations use. */
export interface Database {
  sequelize: Sequelize;
  /** What the SQL of this database says differently, and whether other processes share it. */
  sql: SqlDialect;
  /** Where the data is, for people: the SQLite file, or the PostgreSQL URL without its password. */
  location: string;
  /**
   * Runs `work` in a write transaction and resolves once it has committed durably. On SQLite
   * writes take turns in this process (possibly sharing a commit, each in a savepoint of its own).
   */
  write<T>(work: (transaction: Transaction) => Promise<T>, options?: WriteOptions): Promise<T>;
  /**
   * Runs an INSERT of one row (`$name` parameters) in `transaction` and returns the row's id:
   * the statement every create runs, so each database runs it its cheapest way.
   */
  insertReturningId(sql: string, bind: Record<string, unknown>, transaction: Transaction): Promise<number>;
  /** `insertReturningId` for an INSERT that may write no row, or should return more: `columns` of each row it wrote. */
  insertReturning<Row extends object>(sql: string, columns: string, bind: Record<string, unknown>, transaction: Transaction): Promise<Row[]>;
  /**
   * Runs a SELECT (`$name` parameters), in `transaction` if given, and returns its rows: for the
   * reads requests make often (a key, an organization's rows), which each database runs its
   * cheapest way.
   */
  selectRows<Row extends object>(sql: string, bind: Record<string, unknown>, transaction?: Transaction): Promise<Row[]>;
  /**
   * PostgreSQL's: a write's statements sent in fewer round trips (`postgres.ts`). Absent on
   * SQLite, where a statement is a call into the same process.
   */
  combined?: CombinedWrites;
  /** Resolves when the database answers a trivial query. */
  ping(): Promise<void>;
  close(): Promise<void>;
}

/**
 * A write transaction sent to a database server in as few round trips as it can be: it begins
 * with its first statement, an insert held back goes with the statement after it, and a
 * transaction whose every change fits in its last statement sends that statement alone, which
 * commits by itself (no BEGIN, no COMMIT: a create in two round trips rather than four).
 */
export interface CombinedWrites {
  /**
   * Runs a read on the transaction's connection without beginning the transaction: a value that
   * does not depend on it (a sequence's next number) or that it only reads once.
   */
  readAhead<Row extends object>(sql: string, bind: Record<string, unknown>, transaction: Transaction): Promise<Row[]>;
  /**
   * Holds an insert back: it is sent just before the transaction's next statement, or within its
   * last (`last`), and before COMMIT in any case; at once if the transaction has begun. Its
   * parameters must not share the names of the statement it may join.
   */
  carry(transaction: Transaction, statement: Statement): Promise<void>;
  /**
   * Sends the transaction's last statement, made by `compose` from the inserts still held back
   * (to be written into it). With `alone` and nothing sent yet, it is sent outside any
   * transaction and commits by itself; the transaction then takes no further statement.
   */
  last<Row extends object>(transaction: Transaction, compose: (carried: readonly Statement[]) => ComposedStatement, alone: boolean): Promise<Row[]>;
}

export interface OpenOptions {
  /** For inspection: never create or modify anything. */
  readOnly?: boolean;
  /** Told of every write that succeeds and of every one that fails for want of space. */
  diskSpace?: Pick<DiskSpace, 'written' | 'outOfSpace'>;
  /** PostgreSQL: the most pooled connections (`database_pool_size`). */
  poolSize?: number;
}

/** A SELECT through Sequelize: `selectRows` where the database has no cheaper way. */
export function selectThroughSequelize(sequelize: Sequelize): Database['selectRows'] {
  return (sql, bind, transaction) => sequelize.query(sql, { bind, type: QueryTypes.SELECT, transaction });
}

/**
 * Stores a row in `transaction` where nothing reads it back before the commit: on a database
 * that combines writes, it is held back to go with the transaction's next statement (a round
 * trip fewer). Its parameters must be named apart from that statement's (`CombinedWrites.carry`).
 */
export async function insertInTurn(db: Database, statement: Statement, transaction: Transaction): Promise<void> {
  if (db.combined) await db.combined.carry(transaction, statement);
  else await db.sequelize.query(statement.sql, { bind: statement.bind, transaction });
}

/** `write` that tells `diskSpace` how each write went. */
export function watchedWrites(
  write: Database['write'],
  diskSpace: OpenOptions['diskSpace'],
): Database['write'] {
  return async <T>(work: (transaction: Transaction) => Promise<T>, options?: WriteOptions): Promise<T> => {
    try {
      const result = await write(work, options);
      diskSpace?.written();
      return result;
    } catch (error) {
      if (isOutOfSpace(error)) diskSpace?.outOfSpace();
      throw error;
    }
  };
}

/** PostgreSQL's `unique_violation`. */
const POSTGRES_UNIQUE_VIOLATION = '23505';

/** A unique index refused the row: through Sequelize, or from either database's prepared statements directly. */
export function isUniqueViolation(error: unknown): boolean {
  if (error instanceof UniqueConstraintError) return true;
  const { code, message } = error as { code?: string; message?: string };
  return code === POSTGRES_UNIQUE_VIOLATION || (code === 'SQLITE_CONSTRAINT' && /UNIQUE constraint failed/.test(message ?? ''));
}
