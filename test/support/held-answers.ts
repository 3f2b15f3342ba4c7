import { afterAll, beforeAll, beforeEach } from 'vitest';
import { provideApi } from '../../renderer/src/api';
import { ApiClient, type ReviewQuery } from '../../renderer/src/api/client';
import type { ReviewPage } from '../../renderer/src/api/types';
import { startTestServer, type TestServer } from './server';

/**
 * The dashboard's real API client on a slow connection: list reads reach the server and are
 * answered at once, but while held, the answers reach the stores only on `release()`. What
 * happens on the server meanwhile is then certainly missing from those answers.
 */
export class HeldAnswersClient extends ApiClient {
  /** List reads the server has answered since the client was made. */
  answered = 0;
  private gate: Promise<void> | null = null;

  hold(): () => void {
    let release!: () => void;
    this.gate = new Promise<void>((resolve) => (release = resolve));
    return () => {
      this.gate = null;
      release();
    };
  }

  override async listReviews(query: ReviewQuery): Promise<ReviewPage> {
    const gate = this.gate;
    const page = await super.listReviews(query);
    this.answered += 1;
    if (gate) await gate;
    return page;
  }
}

/**
 * Registers hooks: the real API on loopback for the file, and for each test a fresh
 * HeldAnswersClient the stores use.
 */
export function storesOnHeldAnswers(): { readonly server: TestServer; readonly client: HeldAnswersClient } {
  const running = {} as { server: TestServer; client: HeldAnswersClient };
  beforeAll(async () => {
    running.server = await startTestServer();
  });
  afterAll(() => running.server.dispose());
  beforeEach(() => {
    running.client = new HeldAnswersClient({ baseUrl: running.server.url, apiKey: () => null });
    provideApi(running.client);
  });
  return running;
}
