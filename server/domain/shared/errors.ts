/**
 * The one error type of the service. Domain code throws it with the HTTP status that fits;
 * the HTTP layer turns it into an RFC 9457 problem document. `members` become extra members
 * of that document (for example `review_id` on a 408, the existing `decision` on a 409).
 */
export interface FieldError {
  field: string;
  message: string;
}

export class AppError extends Error {
  constructor(
    readonly status: number,
    readonly detail: string,
    readonly members: Record<string, unknown> & { errors?: FieldError[] } = {},
  ) {
    super(detail);
    this.name = 'AppError';
  }
}

export function notFound(what: string, id: number): AppError {
  return new AppError(404, `${what} ${id} does not exist`);
}

export function invalidInput(field: string, message: string): AppError {
  return new AppError(400, `${field} ${message}`, { errors: [{ field, message }] });
}

/**
 * Well-formed, but it cannot work (422): a person named to decide who cannot, a stage asking
 * for more approvals than it has people to give them.
 */
export function unworkable(field: string, message: string): AppError {
  return new AppError(422, `${field}: ${message}`, { errors: [{ field, message }] });
}

/**
 * Refuses text fields holding NUL. They are stored as text, which PostgreSQL cannot hold NUL
 * in (its driver turns it into the two characters \0, so what was acknowledged would not be
 * what is read back); metadata is stored as JSON, where NUL is written \u0000 and is fine.
 */
export function refuseNul(fields: object): void {
  for (const [name, value] of Object.entries(fields)) {
    if (typeof value === 'string' && value.includes('\u0000')) throw invalidInput(name, 'must not contain the NUL character');
  }
}
