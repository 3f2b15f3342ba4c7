import type { ReviewFilters, ReviewOrder, ReviewRecord } from '../api/types';
import { URGENCY_ORDER } from '../api/types';

const rank = (review: ReviewRecord): number => URGENCY_ORDER.indexOf(review.urgency);
const decidedAt = (review: ReviewRecord): number => (review.decided_at ? Date.parse(review.decided_at) : -Infinity);
const givesUpAt = (review: ReviewRecord): number => (review.waiting_until ? Date.parse(review.waiting_until) : Infinity);
const byPriority = (a: ReviewRecord, b: ReviewRecord): number => rank(a) - rank(b) || a.id - b.id;

/** The same orders the API applies, so a review arriving live lands where a reload would put it. */
export const COMPARATORS: Record<ReviewOrder, (a: ReviewRecord, b: ReviewRecord) => number> = {
  newest: (a, b) => b.id - a.id,
  oldest: (a, b) => a.id - b.id,
  priority: byPriority,
  recently_decided: (a, b) => decidedAt(b) - decidedAt(a) || b.id - a.id,
  // Soonest give-up first; reviews nobody waits on after them, by priority. (Infinity - Infinity is NaN: no wait on either.)
  waiting_until: (a, b) => givesUpAt(a) - givesUpAt(b) || byPriority(a, b),
};

/** Who "Mine" means in the hosted edition: the signed-in person's e-mail and teams. */
export interface Me {
  email: string;
  teams: readonly string[];
}

/** Whether a review belongs in a list shown with these filters (`me` for "Mine" of a signed-in person). */
export function matchesFilters(review: ReviewRecord, filters: ReviewFilters, me?: Me): boolean {
  if (filters.mine && !(me && (review.assigned_to === me.email || (review.assigned_team !== null && me.teams.includes(review.assigned_team))))) return false;
  if (filters.status && review.status !== filters.status) return false;
  if (filters.decided !== undefined && (review.status !== 'pending') !== filters.decided) return false;
  if (filters.waiting !== undefined && (review.waiting_until !== null) !== filters.waiting) return false;
  if (filters.task_type && review.task_type !== filters.task_type) return false;
  if (filters.urgency && review.urgency !== filters.urgency) return false;
  if (filters.framework && review.framework !== filters.framework) return false;
  if (filters.assigned_to && review.assigned_to !== filters.assigned_to) return false;
  if (filters.q && !review.proposed_action.toLowerCase().includes(filters.q.toLowerCase())) return false;
  return true;
}

/**
 * Puts `review` into the sorted, partly loaded `list`. When it would sort after the last
 * loaded item and more pages exist, it is left for those pages to bring. Returns whether it
 * was placed.
 */
export function placeInOrder(list: ReviewRecord[], review: ReviewRecord, order: ReviewOrder, more: boolean): boolean {
  const compare = COMPARATORS[order];
  const index = list.findIndex((item) => compare(review, item) < 0);
  if (index < 0) {
    if (more) return false;
    list.push(review);
    return true;
  }
  list.splice(index, 0, review);
  return true;
}

/** A routing rule decided it the moment it arrived: it was never pending, nobody is alerted. */
export function decidedOnArrival(review: ReviewRecord): boolean {
  return review.routing_rule !== null && review.decision?.reviewer_name === `rule:${review.routing_rule}`;
}
