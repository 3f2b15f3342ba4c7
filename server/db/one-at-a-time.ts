import { QueryTypes } from 'sequelize';
import type { OneAtATime } from '../domain/shared/unit-of-work';
import type { Database } from './database';

/**
 * On SQLite one process owns the database, so work simply runs. On PostgreSQL a transaction of
 * its own holds an advisory lock named after the task while the work runs (on other
 * connections); a process that cannot take the lock leaves the work to the one that holds it.
 */
export function oneAtATime(db: Database): OneAtATime {
  if (!db.sql.sharedByProcesses) {
    return {
      run: async (_task, work) => {
        await work();
        return true;
      },
    };
  }
  return {
    run: (task, work) =>
      db.sequelize.transaction(async (transaction) => {
        const [row] = await db.sequelize.query<{ locked: boolean }>('SELECT pg_try_advisory_xact_lock(hashtext($task)) AS locked', {
          bind: { task: `greenlight:${task}` },
          type: QueryTypes.SELECT,
          transaction,
        });
        if (!row?.locked) return false;
        await work();
        return true;
      }),
  };
}
