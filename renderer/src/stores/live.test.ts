import { createPinia, setActivePinia } from 'pinia';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../../../test/support/server';
import { provideApi } from '../api';
import { ApiClient } from '../api/client';
import { useLiveStore } from './live';
import { useSessionStore } from './session';

const KEY = 'live-store-test-key-0123456789';
let server: TestServer;

beforeAll(async () => {
  server = await startTestServer({ enable_auth: true, api_key: KEY });
});
afterAll(() => server.dispose());
beforeEach(() => {
  setActivePinia(createPinia());
  const session = useSessionStore();
  provideApi(new ApiClient({ baseUrl: server.url, apiKey: () => session.apiKey }));
});
afterEach(() => useLiveStore().stop());

describe('useLiveStore', () => {
  it('goes live with a key entered while the connection made with the previous key is still being refused', async () => {
    const session = useSessionStore();
    const live = useLiveStore();
    session.useKey('not-the-key');
    live.start();
    session.useKey(KEY);
    live.start();
    await expect.poll(() => live.status, { timeout: 5_000 }).toBe('live');
    expect(session.keyNeeded).toBe(false);
  });

  it('stays offline and asks for a key when the current key is refused', async () => {
    const session = useSessionStore();
    const live = useLiveStore();
    session.useKey('not-the-key');
    live.start();
    await expect.poll(() => session.keyNeeded, { timeout: 5_000 }).toBe(true);
    expect(session.keyRejected).toBe(true);
    expect(live.status).toBe('offline');
  });
});
