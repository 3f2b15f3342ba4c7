import type { Request } from 'express';
import { invalidInput } from '../domain/shared/errors';

/**
 * An integer from the path or query, already checked by the OpenAPI validator — except that
 * its type coercion turns `1e309` into Infinity and lets that through as an integer.
 */
export function integerOf(value: unknown, field: string): number {
  const number = Number(value);
  if (!Number.isSafeInteger(number)) throw invalidInput(field, 'must be an integer');
  return number;
}

export function pathInteger(req: Request, name: string): number {
  return integerOf(req.params[name], name);
}

/** The query parameter as an integer, or `fallback` when it is absent. */
export function queryInteger<T extends number | undefined>(req: Request, name: string, fallback: T): number | T {
  const value = req.query[name] as unknown;
  return value === undefined ? fallback : integerOf(value, name);
}
