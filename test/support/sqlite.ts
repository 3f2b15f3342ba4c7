import sqlite3 from 'sqlite3';

export interface SqliteShell {
  all<T = Record<string, unknown>>(sql: string): Promise<T[]>;
  exec(sql: string): Promise<void>;
  close(): Promise<void>;
}

/**
 * A connection of its own to a database file, as the sqlite3 shell or another process would open
 * it: what it reads comes from the committed rows themselves, not from the code under test.
 */
export function openSqlite(file: string, { readOnly = false } = {}): Promise<SqliteShell> {
  return new Promise((resolve, reject) => {
    const opened = (error: Error | null): void => (error ? reject(error) : resolve(shellOf(connection)));
    const connection = readOnly ? new sqlite3.Database(file, sqlite3.OPEN_READONLY, opened) : new sqlite3.Database(file, opened);
  });
}

function shellOf(connection: sqlite3.Database): SqliteShell {
  return {
    all: <T>(sql: string) => new Promise<T[]>((resolve, reject) => connection.all(sql, (error, rows) => (error ? reject(error) : resolve(rows as T[])))),
    exec: (sql) => new Promise<void>((resolve, reject) => connection.exec(sql, (error) => (error ? reject(error) : resolve()))),
    close: () => new Promise<void>((resolve, reject) => connection.close((error) => (error ? reject(error) : resolve()))),
  };
}
