import fs from 'node:fs';
import path from 'node:path';
import sqlite3 from 'sqlite3';
import { Sequelize, Transaction } from 'sequelize';

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

/**
 * Serialises this process's write transactions. SQLite allows one writer at a time; letting
 * several `BEGIN IMMEDIATE` wait inside SQLite's busy handler would park libuv's few worker
 * threads in sleeps while the transaction holding the lock waits for a thread — a stall that
 * ends in SQLITE_BUSY. Queueing here keeps the pool free; `busy_timeout` remains for other
 * processes (the CLI) touching the same file.
 */
class WriteQueue {
  private tail: Promise<unknown> = Promise.resolve();

  run<T>(work: () => Promise<T>): Promise<T> {
    const result = this.tail.then(work);
    this.tail = result.catch(() => undefined);
    return result;
  }
}

export interface Database {
  sequelize: Sequelize;
  file: string;
  /** Runs `work` in an IMMEDIATE transaction, after this process's earlier writes. */
  write<T>(work: (transaction: Transaction) => Promise<T>): Promise<T>;
  /** Resolves when the database answers a trivial query. */
  ping(): Promise<void>;
  close(): Promise<void>;
}

export interface OpenOptions {
  /** Open an existing file for reading only; never create or modify it. */
  readOnly?: boolean;
}

export function openDatabase(file: string, options: OpenOptions = {}): Database {
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
  const writes = new WriteQueue();
  return {
    sequelize,
    file,
    write: (work) => writes.run(() => sequelize.transaction((transaction) => work(transaction))),
    ping: async () => {
      await sequelize.query('SELECT 1');
    },
    close: () => sequelize.close(),
  };
}
