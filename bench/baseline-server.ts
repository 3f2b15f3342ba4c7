/**
 * The practical limit for this stack, measured beside Greenlight: a minimal Express handler
 * that inserts the same review row through `sqlite3` into a file with Greenlight's schema,
 * with the same durability (WAL, synchronous=FULL), and answers 201 with the row. No
 * validation, no ORM, no events: what Greenlight's create costs above this is its own.
 *
 * A create with `blocking: true` is stored, then held open (Express's request and response and
 * the row to answer with) until `POST /release` answers every one of them: the least any Express
 * server holding waiting agents keeps per agent. `GET /stats` counts them as `pending_reviews`,
 * as Greenlight's does.
 *
 * Usage: node baseline-server.js <database file> <port>
 */
import express from 'express';
import sqlite3 from 'sqlite3';
import { type ReviewBody as Body, reviewColumnValues } from './http';

const [file, port] = process.argv.slice(2);
const database = new sqlite3.Database(file);
database.exec('PRAGMA journal_mode = WAL; PRAGMA synchronous = FULL; PRAGMA busy_timeout = 5000; PRAGMA foreign_keys = ON');
const insert = database.prepare(
  `INSERT INTO reviews (organization_id, agent_id, task_type, proposed_action, agent_reasoning, confidence_score, urgency, framework,
                        metadata, status, created_at, updated_at)
   VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 'pending', ?, ?)`,
);


/** Held blocking creates, each ready to be answered. */
const held: Array<() => void> = [];

const app = express();
app.use(express.json());
app.get('/health', (_req, res) => {
  res.json({ status: 'healthy' });
});
app.post('/reviews', (req, res) => {
  const body = req.body as Body;
  const now = Date.now();
  const values = [...reviewColumnValues(body), now, now];
  insert.run(values, function (this: sqlite3.RunResult, error: Error | null) {
    if (error) {
      res.status(500).json({ detail: error.message });
      return;
    }
    const { blocking, ...review } = body;
    const answer = (): void => void res.status(201).json({ id: this.lastID, ...review, status: 'pending', created_at: new Date(now).toISOString(), decision: null });
    if (blocking) held.push(answer);
    else answer();
  });
});
app.get('/stats', (_req, res) => {
  res.json({ pending_reviews: held.length });
});
app.post('/release', (_req, res) => {
  const released = held.splice(0);
  for (const answer of released) answer();
  res.json({ released: released.length });
});
const server = app.listen(Number(port), '127.0.0.1');
process.on('SIGTERM', () => server.close(() => insert.finalize(() => database.close())));
