import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import pg from 'pg';
import { openDatabase } from '../../server/db/connection';
import type { CombinedWrites, Database, Statement } from '../../server/db/database';
import { createTestDatabase, TEST_DATABASE_URL, type TestDatabase } from '../support/postgres';

/**
 * PostgreSQL's write transactions sent in fewer round trips (`CombinedWrites`): what a
 * transaction stores must not depend on how its statements went out. Each test's table is its
 * own; another connection reads what committed.
 */
describe.runIf(TEST_DATABASE_URL)('a write transaction on PostgreSQL, sent in as few round trips as it can be', () => {
  let database: TestDatabase;
  let db: Database;
  let combined: CombinedWrites;
  let observer: pg.Client;

  beforeEach(async () => {
    database = await createTestDatabase();
    db = await openDatabase(database.url);
    combined = db.combined!;
    await db.sequelize.query('CREATE TABLE notes (id INTEGER PRIMARY KEY, text TEXT NOT NULL)');
    observer = new pg.Client({ connectionString: database.url });
    await observer.connect();
  });

  afterEach(async () => {
    await observer.end();
    await db.close();
    await database.drop();
  });

  const note = (id: number, text: string): Statement => ({ sql: 'INSERT INTO notes (id, text) VALUES ($note_id, $note_text)', bind: { note_id: id, note_text: text } });
  /** The last statement: another note, written around the ones held back, as the outbox's statement is. */
  const lastNote = (id: number, text: string) => (heldBack: readonly Statement[]) => ({
    sql: `WITH ${heldBack.map((held, i) => `held_${i} AS (${held.sql}), `).join('')}last AS (INSERT INTO notes (id, text) VALUES ($last_id, $last_text) RETURNING id) SELECT id FROM last`,
    binds: [{ last_id: id, last_text: text }, ...heldBack.map((held) => held.bind)],
  });
  const committed = async (): Promise<string[]> => (await observer.query<{ text: string }>('SELECT text FROM notes ORDER BY id')).rows.map((row) => row.text);

  it('commits an insert held back together with the last statement it went out in', async () => {
    const rows = await db.write(async (transaction) => {
      await combined.carry(transaction, note(1, 'held back'));
      expect(await committed()).toEqual([]);
      return combined.last<{ id: number }>(transaction, lastNote(2, 'last'), true);
    });
    expect(rows.map((row) => Number(row.id))).toEqual([2]);
    expect(await committed()).toEqual(['held back', 'last']);
  });

  it('stores nothing of the statement sent alone when it fails, not even what was held back for it', async () => {
    await db.write((transaction) => combined.last(transaction, lastNote(2, 'taken'), true));
    const failing = db.write(async (transaction) => {
      await combined.carry(transaction, note(1, 'held back'));
      return combined.last(transaction, lastNote(2, 'a second note 2'), true);
    });
    await expect(failing).rejects.toThrow(/duplicate key/);
    expect(await committed()).toEqual(['taken']);
    // The connection went back to the pool in good order: the next write works.
    await db.write((transaction) => combined.last(transaction, lastNote(3, 'after'), true));
    expect(await committed()).toEqual(['taken', 'after']);
  });

  it('refuses any statement after the one that committed alone, through either path', async () => {
    await db.write(async (transaction) => {
      await combined.last(transaction, lastNote(1, 'last'), true);
      await expect(db.selectRows('SELECT 1 AS one', {}, transaction)).rejects.toThrow(/committed with its last statement/);
      await expect(db.sequelize.query('SELECT 1', { transaction })).rejects.toThrow(/commit has been called on this transaction/);
    });
    expect(await committed()).toEqual(['last']);
  });

  it('sends what was held back before the transaction’s next statement, which sees it, and undoes both when the work fails', async () => {
    const seen = db.write(async (transaction) => {
      await combined.carry(transaction, note(1, 'held back'));
      const [row] = await db.selectRows<{ count: number }>('SELECT count(*) AS count FROM notes', {}, transaction);
      expect(Number(row.count)).toBe(1);
      await db.sequelize.query("INSERT INTO notes (id, text) VALUES (2, 'through Sequelize')", { transaction });
      throw new Error('the work failed');
    });
    await expect(seen).rejects.toThrow('the work failed');
    expect(await committed()).toEqual([]);
  });

  it('commits what was held back for a statement that never came', async () => {
    await db.write((transaction) => combined.carry(transaction, note(1, 'held back')));
    expect(await committed()).toEqual(['held back']);
  });

  it('sends a held-back insert at once in a transaction already begun, and the last statement inside it when it is not alone', async () => {
    await db.write(async (transaction) => {
      await db.selectRows('SELECT 1 AS one', {}, transaction);
      await combined.carry(transaction, note(1, 'sent at once'));
      const [row] = await db.selectRows<{ count: number }>('SELECT count(*) AS count FROM notes', {}, transaction);
      expect(Number(row.count)).toBe(1);
      await combined.last(transaction, lastNote(2, 'last'), true);
      await db.selectRows('SELECT 1 AS one', {}, transaction);
    });
    expect(await committed()).toEqual(['sent at once', 'last']);
    await db.write(async (transaction) => {
      await combined.carry(transaction, note(3, 'held back'));
      await combined.last(transaction, lastNote(4, 'not alone'), false);
      await db.selectRows('SELECT 1 AS one', {}, transaction);
    });
    expect(await committed()).toEqual(['sent at once', 'last', 'held back', 'not alone']);
  });
});
