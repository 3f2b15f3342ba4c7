import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { freePort, startCli } from '../support/cli';
import { makeTempDir } from '../support/temp';

let temp: ReturnType<typeof makeTempDir>;
beforeEach(() => {
  temp = makeTempDir('greenlight-durability-');
});
afterEach(() => temp.remove());

describe('durability', () => {
  it('keeps every review it answered 201 for when killed with SIGKILL mid-stream', async () => {
    const port = await freePort();
    const server = await startCli(['--api-only', '--port', String(port)], { cwd: temp.dir });
    const acknowledged = new Map<number, string>();
    let killed = false;

    const create = async (i: number): Promise<void> => {
      const proposed_action = `action ${i} ${'x'.repeat(i % 50)}`;
      try {
        const response = await fetch(`${server.url}/reviews`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ task_type: 'durability', proposed_action }),
        });
        if (response.status === 201) acknowledged.set(((await response.json()) as { id: number }).id, proposed_action);
      } catch {
        // Requests in flight when the process dies fail; only acknowledged ones must survive.
      }
    };

    const load = (async () => {
      for (let i = 0; i < 200; i += 8) {
        await Promise.all(Array.from({ length: 8 }, (_, k) => create(i + k)));
        if (!killed && acknowledged.size >= 60) {
          killed = true;
          server.child.kill('SIGKILL');
        }
      }
    })();
    await load;
    await server.exited;
    expect(killed).toBe(true);
    expect(acknowledged.size).toBeGreaterThanOrEqual(60);

    const restarted = await startCli(['--api-only', '--port', String(port)], { cwd: temp.dir });
    try {
      for (const [id, proposed_action] of acknowledged) {
        const response = await fetch(`${restarted.url}/reviews/${id}`);
        expect(response.status).toBe(200);
        expect(((await response.json()) as { proposed_action: string }).proposed_action).toBe(proposed_action);
      }
    } finally {
      restarted.child.kill('SIGTERM');
      await restarted.exited;
    }
  });
});
