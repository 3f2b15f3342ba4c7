/**
 * The practical limit for this stack on PostgreSQL, measured beside Greenlight: a minimal
 * Express handler that inserts the same review row into a database with Greenlight's schema
 * and, in the same transaction, the same outbox row, through `pg` with Greenlight's pool size
 * and the server's default commit durability, and answers 201 with the row. No validation, no
 * ORM, no statistics trigger (the run drops it: keeping exact counts is Greenlight's own
 * cost), no events read back.
 *
 * Usage: node baseline-postgres-server.js <database url> <port>
 */
import express from 'express';
import pg from 'pg';
import { type ReviewBody as Body, reviewColumnValues } from './http';

const [databaseUrl, port] = process.argv.slice(2);
// Greenlight's default pool size (`database_pool_size`), which the bench leaves as it is.
const pool = new pg.Pool({ connectionString: databaseUrl, max: 10 });

const INSERT_REVIEW = `INSERT INTO reviews (organization_id, agent_id, task_type, proposed_action, agent_reasoning, confidence_score, urgency,
                                            framework, metadata, status, created_at, updated_at)
                       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, 'pending', $10, $10) RETURNING id`;
const INSERT_EVENT = 'INSERT INTO outbox (organization_id, type, review_id, payload, created_at) VALUES ($1, $2, $3, $4, $5)';


async function insert(body: Body): Promise<Record<string, unknown>> {
  const now = Date.now();
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    const values = [...reviewColumnValues(body), now];
    const { rows } = await client.query<{ id: number }>(INSERT_REVIEW, values);
    const review = { id: rows[0].id, ...body, status: 'pending', created_at: new Date(now).toISOString(), decision: null };
    await client.query(INSERT_EVENT, [body.organization_id ?? null, 'review.created', review.id, JSON.stringify(review), now]);
    await client.query('COMMIT');
    return review;
  } catch (error) {
    await client.query('ROLLBACK').catch(() => {});
    throw error;
  } finally {
    client.release();
  }
}

const app = express();
app.use(express.json());
app.get('/health', (_req, res) => {
  res.json({ status: 'healthy' });
});
app.post('/reviews', (req, res) => {
  insert(req.body as Body).then(
    (review) => res.status(201).json(review),
    (error: Error) => res.status(500).json({ detail: error.message }),
  );
});
const server = app.listen(Number(port), '127.0.0.1');
process.on('SIGTERM', () => server.close(() => void pool.end()));
