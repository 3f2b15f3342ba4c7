/** An organization's routing rules (hosted edition). */

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
  is_active: boolean;
  created_at: string;
  updated_at: string;
}

export type RoutingRuleFields = Pick<RoutingRuleRecord, 'name' | 'priority' | 'conditions' | 'assign_to_user_id' | 'assign_to_team_id' | 'is_active'>;

/** A rule with whom it assigns to, by the names reviews record: the person's e-mail, the team's name. */
export interface RoutableRule extends RoutingRuleRecord {
  assignee_email: string | null;
  team_name: string | null;
}
