import { unworkable } from '../shared/errors';
import { DECIDING_ROLES, type UserRecord } from './records';

/**
 * Refuses (422) a person named to decide reviews — a decision's reviewer, a rule's assignee, a
 * stage's approver — who cannot: a deactivated person, or a viewer. `field` is where they were
 * named, and `instead` what to do about it.
 */
export function requireDecider(user: Pick<UserRecord, 'id' | 'name' | 'role' | 'is_active'>, field: string, instead: string): void {
  const who = `${user.name} (user ${user.id})`;
  if (!user.is_active) throw unworkable(field, `${who} is deactivated; ${instead}`);
  if (!(DECIDING_ROLES as readonly string[]).includes(user.role)) throw unworkable(field, `${who} is a ${user.role}, who reads reviews but cannot decide them; ${instead}`);
}
