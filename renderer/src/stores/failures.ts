import { ApiError, UnauthorizedError } from '../api/client';
import { useSessionStore } from './session';

/** The sentence to show for a failed request; a refused key also brings up the key prompt. */
export function explainFailure(failure: unknown): string {
  if (failure instanceof UnauthorizedError) useSessionStore().refused(failure.keySent);
  return failure instanceof ApiError ? failure.message : String(failure);
}
