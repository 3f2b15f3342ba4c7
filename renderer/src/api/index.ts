import type { ApiClient } from './client';

let current: ApiClient | undefined;

/** Installs the client the stores use: the app's at start-up, a test's in tests. */
export function provideApi(client: ApiClient): void {
  current = client;
}

export function useApi(): ApiClient {
  if (!current) throw new Error('no API client: call provideApi first');
  return current;
}
