import { hash } from 'node:crypto';
import type { Request } from 'express';
import type { IdempotencyClaim } from '../domain/reviews/ports';

/** JSON with every object's keys in order: the same body sent with its fields reordered is the same request. */
function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([name, member]) => `${JSON.stringify(name)}:${canonicalJson(member)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

/**
 * The request's `Idempotency-Key` (its form checked by the OpenAPI validator) with the digest
 * of this body. For a body with files, `files` says what each was (name, type, digest of its
 * bytes), so the same review with other files is another request.
 */
export function idempotencyOf(req: Request, files?: readonly unknown[]): Omit<IdempotencyClaim, 'caller'> | undefined {
  const key = req.get('idempotency-key');
  if (key === undefined) return undefined;
  const body: unknown = files === undefined ? req.body : { ...(req.body as object), files };
  return { key, requestHash: hash('sha256', canonicalJson(body), 'hex') };
}
