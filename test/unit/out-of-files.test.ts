import type { AddressInfo } from 'node:net';
import path from 'node:path';
import express from 'express';
import { afterEach, beforeEach, expect, it } from 'vitest';
import type { Database } from '../../server/db/database';
import { openSqlite } from '../../server/db/sqlite';
import { errorHandler } from '../../server/http/problems';
import { silentLogger } from '../../server/logging';
import { expectProblem } from '../support/server';
import { makeTempDir } from '../support/temp';

let temp: ReturnType<typeof makeTempDir>;
let db: Database;

beforeEach(() => {
  temp = makeTempDir('greenlight-out-of-files-');
  db = openSqlite(path.join(temp.dir, 'writes.db'));
});
afterEach(async () => {
  await db.close();
  temp.remove();
});

/**
 * SQLite says SQLITE_CANTOPEN when a write needs a file (a statement journal, a temporary table)
 * and the process has no descriptor left for it. A file that does not exist gives the same error,
 * through the same write queue and the same wrapping by Sequelize.
 */
it('answers a write SQLite could not open a file for with 503 and Retry-After, not 500', async () => {
  const app = express();
  app.post('/write', async (_req, res) => {
    await db.write((transaction) => db.sequelize.query(`ATTACH DATABASE '${path.join(temp.dir, 'missing', 'other.db')}' AS other`, { transaction }));
    res.status(204).end();
  });
  app.use(errorHandler(silentLogger));
  const server = app.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  try {
    const answer = await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/write`, { method: 'POST' });
    expectProblem({ status: answer.status, headers: answer.headers, body: await answer.json() }, 503, /nothing was stored; retry shortly/);
    expect(answer.headers.get('retry-after')).toBe('5');
  } finally {
    server.close();
  }
});
