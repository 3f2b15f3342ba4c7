/**
 * What differs between the two databases in the SQL the stores write, and in who else may be
 * writing. Chosen once, when the database is opened: the stores ask it rather than branch on
 * which database they run on.
 */
export interface SqlDialect {
  name: 'sqlite' | 'postgres';
  /** Other processes may write to this database at the same time (PostgreSQL); one process owns an SQLite file. */
  sharedByProcesses: boolean;
  /**
   * Appended to a SELECT of rows the transaction goes on to change: they stay held until it
   * ends, so a racing change in another process waits and then sees this one. `no key update`
   * lets inserts that refer to the rows (their foreign keys) go on. SQLite's writes already
   * take turns: nothing.
   */
  lockRows(strength: 'update' | 'no key update'): string;
  /** Appended to a claim's SELECT: rows another process holds are skipped rather than waited for. */
  skipLocked: string;
  /** Case-insensitive for ASCII letters on both: SQLite's LIKE is, PostgreSQL's ILIKE. */
  caseInsensitiveLike: 'LIKE' | 'ILIKE';
  /** Newest first, rows without a value last: SQLite sorts NULL below every value already, PostgreSQL above unless told. */
  descendingNullsLast: 'DESC' | 'DESC NULLS LAST';
}

export const SQLITE: SqlDialect = {
  name: 'sqlite',
  sharedByProcesses: false,
  lockRows: () => '',
  skipLocked: '',
  caseInsensitiveLike: 'LIKE',
  descendingNullsLast: 'DESC',
};

export const POSTGRES: SqlDialect = {
  name: 'postgres',
  sharedByProcesses: true,
  lockRows: (strength) => (strength === 'update' ? ' FOR UPDATE' : ' FOR NO KEY UPDATE'),
  skipLocked: 'FOR UPDATE SKIP LOCKED',
  caseInsensitiveLike: 'ILIKE',
  descendingNullsLast: 'DESC NULLS LAST',
};
