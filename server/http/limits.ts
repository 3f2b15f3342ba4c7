import type { RequestHandler } from 'express';
import { type AppError, invalidInput } from '../domain/shared/errors';

/** Deepest nesting a JSON body may have (the body itself is level 1). */
export const MAX_JSON_DEPTH = 32;
/** Most keys and items under one top-level field of a JSON body, however nested. */
export const MAX_JSON_MEMBERS = 10_000;

interface Pending {
  value: object;
  depth: number;
  /** The top-level field the value sits under, which the error names. */
  field: string;
}

function shapeProblem(body: unknown): AppError | null {
  if (body === null || typeof body !== 'object') return null;
  const members = new Map<string, number>();
  // An explicit stack, not recursion: the nesting being checked is what could exhaust the call stack.
  const pending: Pending[] = [{ value: body, depth: 1, field: '(body)' }];
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    const { value, depth, field } = next;
    if (depth > MAX_JSON_DEPTH) return invalidInput(field, `nests deeper than ${MAX_JSON_DEPTH} levels`);
    for (const [name, member] of Object.entries(value)) {
      const under = depth === 1 ? name : field;
      const count = (members.get(under) ?? 0) + 1;
      if (count > MAX_JSON_MEMBERS) return invalidInput(under, `holds more than ${MAX_JSON_MEMBERS} keys and items`);
      members.set(under, count);
      if (member !== null && typeof member === 'object') pending.push({ value: member, depth: depth + 1, field: under });
    }
  }
  return null;
}

/**
 * Bounds the shape of a parsed JSON body, not only its size: a megabyte still holds half a
 * million nested arrays or a hundred thousand keys of metadata, which cost far more to
 * validate, store, hash and show than their bytes suggest.
 */
export function boundedJsonShape(): RequestHandler {
  return (req, _res, next) => next(shapeProblem(req.body) ?? undefined);
}

/** `boundedJsonShape` for JSON a route parses itself (a multipart part). */
export function checkJsonShape(value: unknown): void {
  const problem = shapeProblem(value);
  if (problem) throw problem;
}
