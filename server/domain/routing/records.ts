/** An organization's routing rules (hosted edition). */

import type { AutoDecision } from './conditions';

export const RULE_MODES = ['shadow', 'enforce'] as const;
/** shadow: only marks the reviews it would decide; enforce: decides them, but for an audit sample. */
export type RuleMode = (typeof RULE_MODES)[number];

/** How often people agreed with what an auto-decide rule would have done, on its shadow and audit-sample reviews they decided. */
export interface RuleAgreement {
  /** Marked reviews a person has decided. */
  decided: number;
  /** Of those, decided as the rule would have: approved as proposed for approve, rejected for reject. */
  agreed: number;
  share: number | null;
  /** The one-sided Clopper–Pearson lower bound on the share, at `confidence`. */
  lower_bound: number | null;
  confidence: number;
  /** Marked reviews still waiting for a person. */
  pending: number;
}

export interface RoutingRuleRecord {
  id: number;
  organization_id: number;
  name: string;
  /** The higher is tried first; ties by the lower id. */
  priority: number;
  /** Field or metadata path → condition, in the routing setting's language. */
  conditions: Record<string, unknown>;
  assign_to_user_id: number | null;
  assign_to_team_id: number | null;
  /** A rule that decides instead of assigning; null for one that assigns. */
  action: { auto_decide: AutoDecision } | null;
  /** An auto-decide rule's mode; null for one that assigns. */
  mode: RuleMode | null;
  /** The share of an enforcing rule's reviews still sent to a person; null for one that assigns. */
  audit_sample_rate: number | null;
  /** The Slack channel the reviews it routes are posted to, instead of the installation's; null: the installation's. */
  slack_channel_id: string | null;
  is_active: boolean;
  created_at: string;
  updated_at: string;
  /** An auto-decide rule's record so far (read with the rule); absent for one that assigns. */
  agreement?: RuleAgreement;
}

export type RoutingRuleFields = Pick<
  RoutingRuleRecord,
  'name' | 'priority' | 'conditions' | 'assign_to_user_id' | 'assign_to_team_id' | 'action' | 'mode' | 'audit_sample_rate' | 'slack_channel_id' | 'is_active'
>;

/** What an auto-decide rule left on a review it did not decide: a shadow rule's mark, or an enforcing rule's audit sample. */
export interface RuleMark {
  rule_id: number;
  kind: 'shadow' | 'audit_sample';
  decision: AutoDecision;
  /** The audit sample's rate when drawn; null for a shadow mark. */
  sample_rate: number | null;
}

/** A marked review's decision so far, for a rule's agreement. */
export interface MarkOutcomes {
  decided: number;
  agreed: number;
  pending: number;
}

/** A rule with whom it assigns to, by the names reviews record: the person's e-mail, the team's name. */
export interface RoutableRule extends RoutingRuleRecord {
  assignee_email: string | null;
  team_name: string | null;
}
