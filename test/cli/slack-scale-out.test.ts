import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningCli, startApiProcess, stopProgram } from '../support/cli';
import { createTestDatabase, TEST_DATABASE_URL, type TestDatabase } from '../support/postgres';
import { call } from '../support/server';
import { FakeSlack } from '../support/slack';
import { makeTempDir } from '../support/temp';

/** Several API processes share one PostgreSQL database: only the `postgres` project runs this. */
const onPostgres = TEST_DATABASE_URL !== undefined;
const why = onPostgres ? '' : ' (PostgreSQL only: skipped on SQLite)';

let temp: ReturnType<typeof makeTempDir>;
let database: TestDatabase;
let slack: FakeSlack;

beforeAll(async () => {
  if (!onPostgres) return;
  temp = makeTempDir('greenlight-slack-scale-out-');
  database = await createTestDatabase();
  slack = await FakeSlack.start();
});
afterAll(async () => {
  await slack?.stop();
  await database?.drop();
  temp?.remove();
});

function apiProcess(name: string): Promise<RunningCli> {
  return startApiProcess(temp.dir, name, database.url, {
    env: { GREENLIGHT_SLACK_API_URL: slack.apiUrl, GREENLIGHT_SLACK_BOT_TOKEN: slack.options.botToken, GREENLIGHT_SLACK_CHANNEL: 'C0REVIEWS' },
  });
}

describe('Slack messages from API processes sharing one PostgreSQL database', () => {
  it.skipIf(!onPostgres)(`post each review once, and each decision updates its one message${why}`, { timeout: 90_000 }, async () => {
    const [a, b] = [await apiProcess('a'), await apiProcess('b')];
    try {
      // Slack rate-limits the first posts: both processes then retry what they hold, still once each.
      slack.rateLimit('chat.postMessage', 5, 1);
      const created = await Promise.all(Array.from({ length: 40 }, (_, n) => call((n % 2 === 0 ? a : b).url, 'POST', '/reviews', { task_type: 'scale-out', proposed_action: `slack ${n}` })));
      const ids = created.map((answer) => {
        expect(answer.status).toBe(201);
        return answer.body.id as number;
      });
      await expect.poll(() => slack.messages.length, { timeout: 30_000 }).toBe(40);
      const posted = slack.messages.map((message) => Number(/#(\d+):/.exec(message.text)?.[1]));
      expect(new Set(posted)).toEqual(new Set(ids));
      for (const [n, id] of ids.entries()) {
        const decided = await call((n % 2 === 0 ? b : a).url, 'POST', `/reviews/${id}/decide`, { decision_type: 'approve' });
        expect(decided.status).toBe(200);
      }
      await expect.poll(() => slack.messages.filter((message) => message.updates >= 1).length, { timeout: 30_000 }).toBe(40);
      expect(slack.messages).toHaveLength(40);
      expect(slack.messages.every((message) => message.text.startsWith('Review (approved)'))).toBe(true);
    } finally {
      await Promise.all([stopProgram(a), stopProgram(b)]);
    }
  });
});
