import path from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { QueryTypes } from 'sequelize';
import { openDatabase } from '../../server/db/connection';
import type { Database } from '../../server/db/database';
import { migrate } from '../../server/db/migrate';
import { OUTBOX_RETENTION_MS, Outbox } from '../../server/db/outbox';
import { domainEvent } from '../../server/domain/shared/events';
import type { ReviewRecord } from '../../server/domain/reviews/records';
import { createTestDatabase, TEST_DATABASE_URL, type TestDatabase } from '../support/postgres';
import { makeTempDir } from '../support/temp';

let temp: ReturnType<typeof makeTempDir>;
let database: TestDatabase | null = null;
let db: Database;

afterEach(async () => {
  await db.close();
  await database?.drop();
  temp.remove();
});

async function ids(): Promise<number[]> {
  const rows = await db.sequelize.query<{ id: number }>('SELECT id FROM outbox ORDER BY id', { type: QueryTypes.SELECT });
  return rows.map((row) => Number(row.id));
}

it('removes entries past their retention as writes go on, whether a transaction wrote one entry or several', async () => {
  temp = makeTempDir('greenlight-outbox-');
  database = TEST_DATABASE_URL ? await createTestDatabase() : null;
  db = await openDatabase(database?.url ?? `sqlite:${path.join(temp.dir, 'greenlight.db')}`);
  await migrate(db.sequelize);
  let now = Date.parse('2026-11-20T08:00:00.000Z');
  const outbox = new Outbox(db, () => now);
  const event = (reviewId: number) => domainEvent('review.decided', { id: reviewId, organization_id: null, agent_id: null }, { id: reviewId } as ReviewRecord);

  const [old] = (await db.write((transaction) => outbox.write(transaction, [event(1)]))).entries;
  const [olderPair] = (await db.write((transaction) => outbox.write(transaction, [event(2), event(3)]))).entries;
  now += OUTBOX_RETENTION_MS + 1;
  // Single entries (a create's), as most writes are, until pruning comes round.
  for (let n = 0; n < 600; n += 1) await db.write((transaction) => outbox.write(transaction, [event(10 + n)]));

  const left = await ids();
  expect(left).not.toContain(old.id);
  expect(left).not.toContain(olderPair.id);
  expect(left).toHaveLength(600);
});
