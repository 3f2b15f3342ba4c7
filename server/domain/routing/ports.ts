/** What organizations' routing rules need from the world (hosted edition). */

import type { Tx } from '../shared/unit-of-work';
import type { MarkOutcomes, RoutableRule, RoutingRuleFields, RoutingRuleRecord, RuleMark } from './records';

/** An organization's routing rules (hosted edition). */
export interface RoutingRuleRepository {
  /** The new rule, or null when the organization has a rule of that name. */
  insert(tx: Tx, organizationId: number, rule: RoutingRuleFields, now: number): Promise<RoutingRuleRecord | null>;
  /** Oldest first. */
  list(organizationId: number): Promise<RoutingRuleRecord[]>;
  find(organizationId: number, id: number, tx?: Tx): Promise<RoutingRuleRecord | null>;
  /** The rule as changed; null when it is not the organization's; 'name_taken' when another rule has the new name. */
  update(tx: Tx, organizationId: number, id: number, rule: RoutingRuleFields, now: number): Promise<RoutingRuleRecord | null | 'name_taken'>;
  delete(tx: Tx, organizationId: number, id: number): Promise<boolean>;
  /** Every rule of the organization with its assignee's e-mail and team's name, oldest first. */
  routable(organizationId: number, tx?: Tx): Promise<RoutableRule[]>;
  /** The Slack channel of the organization's rule named `name`; null when it has none, or there is no such rule. */
  slackChannelOf(tx: Tx, organizationId: number, name: string): Promise<string | null>;
  saveMark(tx: Tx, organizationId: number, reviewId: number, mark: RuleMark): Promise<void>;
  marksOf(reviewIds: readonly number[]): Promise<Map<number, RuleMark>>;
  /**
   * Per auto-decide rule of the organization, its marked reviews: how many a person decided, how
   * many of those as the rule would have, how many wait. Counted by the database.
   */
  outcomes(organizationId: number, ruleIds: readonly number[]): Promise<Map<number, MarkOutcomes>>;
}
