import querystring from 'node:querystring';
import type { Request } from 'express';
import { invalidInput } from '../domain/shared/errors';
import { plainRecord } from './plain-records';

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

/** A query string parsed as Express's default ("simple") parser does, into a plain record. */
export function parseQuery(text: string | null | undefined): Record<string, unknown> {
  return text ? Object.assign(plainRecord(), querystring.parse(text)) : plainRecord();
}
