import fs from 'node:fs';
import path from 'node:path';
import { QueryTypes, type Transaction } from 'sequelize';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Database } from '../../server/db/database';
import { openSqlite as openDatabaseFile } from '../../server/db/sqlite';
import { openSqlite } from '../support/sqlite';
import { makeTempDir } from '../support/temp';

let temp: ReturnType<typeof makeTempDir>;
let file: string;
let db: Database;

beforeEach(async () => {
  temp = makeTempDir('greenlight-writes-');
  file = path.join(temp.dir, 'writes.db');
  db = openDatabaseFile(file);
  await db.sequelize.query('CREATE TABLE entries (id INTEGER PRIMARY KEY, label TEXT NOT NULL UNIQUE)');
});
afterEach(async () => {
  await db.close();
  temp.remove();
});

/** A write that stores `label` and answers the id it got. */
const insert = (label: string) => async (transaction: Transaction) =>
  (await db.sequelize.query('INSERT INTO entries (label) VALUES (?)', { replacements: [label], type: QueryTypes.INSERT, transaction }))[0];

const labels = (count: number) => Array.from({ length: count }, (_, i) => `entry ${i}`);

/** Another process's view of the file: committed rows only. */
async function readCommitted(sql: string): Promise<Array<Record<string, unknown>>> {
  const reader = await openSqlite(file, { readOnly: true });
  try {
    return await reader.all(sql);
  } finally {
    await reader.close();
  }
}

/**
 * Keeps the write queue busy until `release` is called, so that the writes queued meanwhile
 * share the next commit.
 */
async function holdQueue(): Promise<{ holder: Promise<void>; release: () => void }> {
  let holding!: () => void;
  let release!: () => void;
  const held = new Promise<void>((resolve) => (holding = resolve));
  const holder = db.write(() => {
    holding();
    return new Promise<void>((resolve) => (release = resolve));
  });
  await held;
  return { holder, release };
}

/** `insert`, counting in `runs` how often each label's write was run. */
const counted = (runs: Map<string, number>, label: string) => (transaction: Transaction) => {
  runs.set(label, (runs.get(label) ?? 0) + 1);
  return insert(label)(transaction);
};

describe('Database.write', () => {
  it('stores 200 parallel writes durably, each answered with its own result, in a few shared commits', async () => {
    const transactions = new Set<Transaction>();
    db.sequelize.addHook('beforeQuery', (options) => {
      if (options.transaction) transactions.add(options.transaction);
    });

    const ids = await Promise.all(labels(200).map((label) => db.write(insert(label))));
    await db.close();
    db = openDatabaseFile(file);

    const stored = await db.sequelize.query<{ id: number; label: string }>('SELECT id, label FROM entries ORDER BY id', { type: QueryTypes.SELECT });
    expect(stored).toEqual(labels(200).map((label, i) => ({ id: ids[i], label })));
    expect(transactions.size).toBeGreaterThan(0);
    // The first write commits alone (nothing else is queued yet); the rest share commits of up to 64.
    expect(transactions.size).toBeLessThanOrEqual(1 + Math.ceil(199 / 64));
  });

  it('rolls back only the write that fails in a shared commit, and rejects only its caller', async () => {
    await db.write(insert('taken'));
    const { holder, release } = await holdQueue();
    const changedMind = new Error('changed my mind');
    const writes = [
      db.write(insert('first')),
      db.write(insert('taken')),
      db.write(async (transaction) => {
        await insert('doomed')(transaction);
        throw changedMind;
      }),
      db.write(insert('last')),
    ];
    release();
    await holder;
    const [first, duplicate, thrown, last] = await Promise.allSettled(writes);

    expect(first.status).toBe('fulfilled');
    expect(duplicate).toMatchObject({ status: 'rejected', reason: { name: 'SequelizeUniqueConstraintError' } });
    expect(thrown).toEqual({ status: 'rejected', reason: changedMind });
    expect(last.status).toBe('fulfilled');
    expect((await readCommitted('SELECT label FROM entries ORDER BY id')).map((row) => row.label)).toEqual(['taken', 'first', 'last']);
  });

  it('shares a commit among rerunnable writes without savepoints; when one fails, runs them again and stores each once', async () => {
    await db.write(insert('taken'));
    const { holder, release } = await holdQueue();
    const runs = new Map<string, number>();
    const writes = ['first', 'taken', 'last'].map((label) => db.write(counted(runs, label), { rerunnable: true }));
    release();
    await holder;
    const [first, duplicate, last] = await Promise.allSettled(writes);

    expect(duplicate).toMatchObject({ status: 'rejected', reason: { name: 'SequelizeUniqueConstraintError' } });
    const stored = await readCommitted('SELECT id, label FROM entries ORDER BY id');
    expect(stored.map((row) => row.label)).toEqual(['taken', 'first', 'last']);
    expect([first, last]).toEqual([
      { status: 'fulfilled', value: stored[1].id },
      { status: 'fulfilled', value: stored[2].id },
    ]);
    // Together, the batch stopped at the duplicate and was rolled back; then each ran in a savepoint.
    expect(Object.fromEntries(runs)).toEqual({ first: 2, taken: 2, last: 1 });
  });

  it('never runs a write twice unless it says it may be, even beside rerunnable ones that fail', async () => {
    await db.write(insert('taken'));
    const { holder, release } = await holdQueue();
    const runs = new Map<string, number>();
    const writes = [
      db.write(counted(runs, 'first'), { rerunnable: true }),
      db.write(counted(runs, 'taken'), { rerunnable: true }),
      db.write(counted(runs, 'once')),
    ];
    release();
    await holder;
    const outcomes = await Promise.allSettled(writes);

    expect(outcomes.map((outcome) => outcome.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect(Object.fromEntries(runs)).toEqual({ first: 1, taken: 1, once: 1 });
    expect((await readCommitted('SELECT label FROM entries ORDER BY id')).map((row) => row.label)).toEqual(['taken', 'first', 'once']);
  });

  it('answers a write only once another connection can read what it wrote', async () => {
    const seen = await Promise.all(
      labels(20).map(async (label) => {
        const id = await db.write(insert(label));
        return (await readCommitted(`SELECT label FROM entries WHERE id = ${id}`))[0]?.label;
      }),
    );
    expect(seen).toEqual(labels(20));
  });

  it('finishes the writes still queued when closed, and they are stored', async () => {
    const writes = labels(100).map((label) => db.write(insert(label)));
    await db.close();

    const outcomes = await Promise.allSettled(writes);
    db = openDatabaseFile(file);
    expect(outcomes.filter((outcome) => outcome.status === 'rejected')).toEqual([]);
    expect(await readCommitted('SELECT COUNT(*) AS count FROM entries')).toEqual([{ count: 100 }]);
  });

  it('inserts through prepared statements with their ids, rolls a failing one back alone, and still closes the file cleanly', async () => {
    const prepared = (label: string | null) => (transaction: Transaction) => db.insertReturningId('INSERT INTO entries (label) VALUES ($label)', { label }, transaction);
    const outcomes = await Promise.allSettled([...labels(30), 'entry 3', null].map((label) => db.write(prepared(label))));

    const ids = outcomes.slice(0, 30).map((outcome) => (outcome as PromiseFulfilledResult<number>).value);
    expect(outcomes.slice(30).map((outcome) => outcome.status)).toEqual(['rejected', 'rejected']);
    expect(await readCommitted('SELECT id, label FROM entries ORDER BY id')).toEqual(labels(30).map((label, i) => ({ id: ids[i], label })));
    // SQLite refuses to close a connection with statements left unfinalized; closed cleanly, the
    // last connection folds the write-ahead log into the file and removes it.
    await db.close();
    expect(fs.existsSync(`${file}-wal`)).toBe(false);
    db = openDatabaseFile(file);
  });

  it('closes cleanly when a write with a prepared insert starts while it closes, and stores that write', async () => {
    const prepared = (label: string) => (transaction: Transaction) => db.insertReturningId('INSERT INTO entries (label) VALUES ($label)', { label }, transaction);
    await db.write(prepared('before'));
    const closing = db.close();
    // As a long-poll's wait is removed after its agent was answered: queued once closing began.
    const late = db.write(prepared('late'));
    await closing;
    expect(await late).toEqual(expect.any(Number));
    expect(fs.existsSync(`${file}-wal`)).toBe(false);
    db = openDatabaseFile(file);
    expect(await readCommitted('SELECT label FROM entries ORDER BY id')).toEqual([{ label: 'before' }, { label: 'late' }]);
  });
});
