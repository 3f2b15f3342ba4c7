import { AppError, invalidInput, notFound, refuseNul } from '../shared/errors';
import type { Routing } from './review-policy';
import type { Clock, Tx, UnitOfWork } from '../shared/unit-of-work';
import type { PeopleRepository } from '../people/ports';
import { requireDecider } from '../people/deciders';
import type { Principal } from '../shared/principal';
import type { RoutableRule, RoutingRuleFields, RoutingRuleRecord, RuleMark, RuleMode } from './records';
import type { ReviewRecord } from '../reviews/records';
import { clopperPearsonLower } from '../evaluations/statistics';
import { DEFAULT_AUDIT_SAMPLE_RATE } from '../evaluations/suggested-rule';
import type { RoutingRuleRepository } from './ports';
import { type AutoDecision, type ConditionResult, compileRules, isSlackChannelId, type RoutableReview, type Rule, RuleError, SLACK_CHANNEL_ID_EXPECTED } from './conditions';
import { organizationOf, organizationOfCaller } from '../shared/scope';
import { PerOrganization } from '../shared/per-organization';

export interface RoutingRuleInput {
  name: string;
  priority: number;
  conditions?: Record<string, unknown>;
  assign_to_user_id?: number | null;
  assign_to_team_id?: number | null;
  /** Decide instead of assign: `{auto_decide: approve | reject}`. */
  action?: { auto_decide: AutoDecision } | null;
  mode?: RuleMode;
  audit_sample_rate?: number;
  /** The Slack channel the reviews it routes are posted to (hosted Slack install); null: the installation's. */
  slack_channel_id?: string | null;
  is_active?: boolean;
  organization_id?: number | null;
}

/** The confidence of the lower bound shown on a rule's agreement: the same as an eval's default. */
const AGREEMENT_CONFIDENCE = 0.95;

export type RoutingRuleChanges = Partial<Omit<RoutingRuleInput, 'organization_id'>>;

/** How one rule fared on a sample review, in the order rules are tried. */
export interface RuleTrial {
  id: number;
  name: string;
  priority: number;
  is_active: boolean;
  /** Every condition held (an inactive rule is tried for the explanation, and never wins). */
  matched: boolean;
  conditions: ConditionResult[];
}

export interface RoutingTrial {
  /** The rule that would route the review, or null: it would go unassigned. */
  matched_rule: { id: number; name: string; assign_to_user_id: number | null; assign_to_team_id: number | null } | null;
  rules: RuleTrial[];
}

/**
 * The engine's form of a stored rule: the names a review records for its assignee (the
 * person's e-mail) and team (its name), or placeholders while they are only being checked.
 */
function engineForm(rule: RoutingRuleFields, assignee: string | null, team: string | null): Record<string, unknown> {
  return {
    name: rule.name,
    priority: rule.priority,
    conditions: rule.conditions,
    is_active: rule.is_active,
    ...(assignee === null ? {} : { assign_to: assignee }),
    ...(team === null ? {} : { assign_to_team: team }),
    ...(rule.action ? { auto_decide: rule.action.auto_decide } : {}),
  };
}

/** Compiles the organization's rules, in the order they are tried, each beside its stored record. */
function compiled(stored: readonly RoutableRule[]): CompiledRules {
  const byName = new Map(stored.map((rule) => [rule.name, rule]));
  // A rule whose assignee is gone (never: users are deactivated, not deleted) would have no action; it is left out.
  const routable = stored.filter((rule) => rule.action !== null || rule.assignee_email !== null || rule.team_name !== null);
  return compileRules(routable.map((rule) => engineForm(rule, rule.assignee_email, rule.team_name))).map((rule) => ({ stored: byName.get(rule.name)!, rule }));
}

type CompiledRules = Array<{ stored: RoutableRule; rule: Rule }>;

/** The routing rules an organization keeps in the database (hosted edition), on the engine of the `routing` setting. */
export class OrganizationRouting {
  /** Each organization's rules as a create tries them, compiled once (see `PerOrganization`). */
  readonly kept: PerOrganization<CompiledRules>;

  constructor(
    private readonly rules: RoutingRuleRepository,
    private readonly people: PeopleRepository,
    private readonly unitOfWork: UnitOfWork,
    private readonly clock: Clock,
    /** Draws an enforcing rule's audit sample: uniform on [0, 1). Tests seed it. */
    private readonly random: () => number = Math.random,
  ) {
    this.kept = new PerOrganization(async (organizationId) => compiled(await this.rules.routable(organizationId)));
  }

  async create(principal: Principal, input: RoutingRuleInput): Promise<RoutingRuleRecord> {
    refuseNul(input);
    const organizationId = organizationOf(principal.scope, input.organization_id) ?? organizationOfCaller(principal);
    const fields: RoutingRuleFields = {
      name: input.name.trim(),
      priority: input.priority,
      conditions: input.conditions ?? {},
      assign_to_user_id: input.assign_to_user_id ?? null,
      assign_to_team_id: input.assign_to_team_id ?? null,
      ...decidingFields(input.action ?? null, input.mode, input.audit_sample_rate, null),
      slack_channel_id: input.slack_channel_id ?? null,
      is_active: input.is_active ?? true,
    };
    return this.unitOfWork.run(async (tx) => {
      await this.check(tx, organizationId, fields, true);
      const created = await this.rules.insert(tx, organizationId, fields, this.clock());
      if (!created) throw new AppError(409, `the organization already has a routing rule named '${fields.name}'`);
      tx.organizationChanged(organizationId);
      tx.audit({ organization_id: organizationId, action: 'routing_rule.created', target_type: 'routing_rule', target_id: created.id, data: { ...fields } });
      return created;
    }, { by: principal });
  }

  async list(principal: Principal): Promise<{ routing_rules: RoutingRuleRecord[]; count: number }> {
    const organizationId = organizationOfCaller(principal);
    const rules = await this.withAgreement(organizationId, await this.rules.list(organizationId));
    return { routing_rules: rules, count: rules.length };
  }

  async get(principal: Principal, id: number): Promise<RoutingRuleRecord> {
    const organizationId = organizationOfCaller(principal);
    const rule = await this.rules.find(organizationId, id);
    if (!rule) throw notFound('routing rule', id);
    return (await this.withAgreement(organizationId, [rule]))[0];
  }

  /**
   * Auto-decide rules with how often people agreed with what they would have done, over their
   * shadow and audit-sample reviews: the share and its one-sided Clopper–Pearson lower bound.
   */
  private async withAgreement(organizationId: number, rules: RoutingRuleRecord[]): Promise<RoutingRuleRecord[]> {
    const deciding = rules.filter((rule) => rule.action !== null).map((rule) => rule.id);
    if (deciding.length === 0) return rules;
    const outcomes = await this.rules.outcomes(organizationId, deciding);
    return rules.map((rule) => {
      if (rule.action === null) return rule;
      const { decided, agreed, pending } = outcomes.get(rule.id) ?? { decided: 0, agreed: 0, pending: 0 };
      const lowerBound = decided > 0 ? Math.round(clopperPearsonLower(agreed, decided, AGREEMENT_CONFIDENCE) * 1e6) / 1e6 : null;
      return { ...rule, agreement: { decided, agreed, share: decided > 0 ? Math.round((agreed / decided) * 1e6) / 1e6 : null, lower_bound: lowerBound, confidence: AGREEMENT_CONFIDENCE, pending } };
    });
  }

  async update(principal: Principal, id: number, changes: RoutingRuleChanges): Promise<RoutingRuleRecord> {
    refuseNul(changes);
    const organizationId = organizationOfCaller(principal);
    return this.unitOfWork.run(async (tx) => {
      const current = await this.rules.find(organizationId, id, tx);
      if (!current) throw notFound('routing rule', id);
      const fields: RoutingRuleFields = {
        name: changes.name?.trim() ?? current.name,
        priority: changes.priority ?? current.priority,
        conditions: changes.conditions ?? current.conditions,
        assign_to_user_id: changes.assign_to_user_id === undefined ? current.assign_to_user_id : changes.assign_to_user_id,
        assign_to_team_id: changes.assign_to_team_id === undefined ? current.assign_to_team_id : changes.assign_to_team_id,
        ...decidingFields(changes.action === undefined ? current.action : changes.action, changes.mode, changes.audit_sample_rate, current),
        slack_channel_id: changes.slack_channel_id === undefined ? current.slack_channel_id : changes.slack_channel_id,
        is_active: changes.is_active ?? current.is_active,
      };
      await this.check(tx, organizationId, fields, changes.assign_to_user_id !== undefined);
      const updated = await this.rules.update(tx, organizationId, id, fields, this.clock());
      if (updated === 'name_taken') throw new AppError(409, `the organization already has a routing rule named '${fields.name}'`);
      if (!updated) throw notFound('routing rule', id);
      tx.organizationChanged(organizationId);
      tx.audit({ organization_id: organizationId, action: 'routing_rule.updated', target_type: 'routing_rule', target_id: id, data: { changed: Object.keys(changes) } });
      if (fields.mode !== current.mode && fields.mode !== null) {
        // A rule that starts (or stops) deciding reviews by itself is a change of its own in the log.
        tx.audit({ organization_id: organizationId, action: fields.mode === 'enforce' ? 'routing_rule.enforced' : 'routing_rule.shadowed', target_type: 'routing_rule', target_id: id, data: { name: fields.name, audit_sample_rate: fields.audit_sample_rate } });
      }
      return updated;
    }, { by: principal });
  }

  async delete(principal: Principal, id: number): Promise<void> {
    const organizationId = organizationOfCaller(principal);
    await this.unitOfWork.run(async (tx) => {
      if (!(await this.rules.delete(tx, organizationId, id))) throw notFound('routing rule', id);
      tx.organizationChanged(organizationId);
      tx.audit({ organization_id: organizationId, action: 'routing_rule.deleted', target_type: 'routing_rule', target_id: id, data: {} });
    }, { by: principal });
  }

  /**
   * Where the organization's rules send a new review, or null when none matches. The first
   * matching auto-decide rule decides it when it enforces, except for its audit sample; a shadow
   * rule, or an enforcing rule's audit sample, only marks the review, which the next matching
   * assigning rule then routes to a person (or none: the routing setting, then unassigned).
   */
  async route(organizationId: number, review: RoutableReview): Promise<Routing | null> {
    let mark: RuleMark | null = null;
    for (const { stored, rule } of await this.kept.get(organizationId)) {
      if (!rule.isActive || !rule.matches(review)) continue;
      if (rule.action.kind === 'assign') return { rule: rule.name, assignTo: rule.action.assignTo, team: rule.action.team, candidates: [], autoDecide: null, mark };
      if (mark) continue;
      const decision = rule.action.decision;
      if (stored.mode === 'enforce') {
        const rate = stored.audit_sample_rate ?? DEFAULT_AUDIT_SAMPLE_RATE;
        if (this.random() >= rate) return { rule: rule.name, assignTo: null, team: null, candidates: [], autoDecide: decision, mark: null };
        mark = { rule_id: stored.id, kind: 'audit_sample', decision, sample_rate: rate };
      } else {
        mark = { rule_id: stored.id, kind: 'shadow', decision, sample_rate: null };
      }
    }
    return mark && { rule: null, assignTo: null, team: null, candidates: [], autoDecide: null, mark };
  }

  /** Stores what a rule left on a new review, in the transaction that stores the review. */
  saveMark(tx: Tx, organizationId: number, reviewId: number, mark: RuleMark): Promise<void> {
    return this.rules.saveMark(tx, organizationId, reviewId, mark);
  }

  /** The reviews with the marks rules left on them: `shadow_rule_id`, or `audit_sample` with `audit_rule_id`. */
  async withMarks(organizationId: number | null, reviews: ReviewRecord[]): Promise<ReviewRecord[]> {
    if (organizationId === null || reviews.length === 0) return reviews;
    const marks = await this.rules.marksOf(reviews.map((review) => review.id));
    if (marks.size === 0) return reviews;
    return reviews.map((review) => {
      const mark = marks.get(review.id);
      if (!mark) return review;
      return mark.kind === 'shadow' ? { ...review, shadow_rule_id: mark.rule_id } : { ...review, audit_sample: true, audit_rule_id: mark.rule_id };
    });
  }

  /** Which rule a sample review would meet, and why each rule before it did not: the console's rule tester. */
  async trial(principal: Principal, review: RoutableReview): Promise<RoutingTrial> {
    const organizationId = organizationOfCaller(principal);
    const rules = compiled(await this.rules.routable(organizationId)).map(({ stored, rule }) => {
      const conditions = rule.explain(review);
      return { id: stored.id, name: stored.name, priority: stored.priority, is_active: stored.is_active, matched: conditions.every((c) => c.holds), conditions };
    });
    const winner = rules.find((rule) => rule.is_active && rule.matched);
    const stored = winner && (await this.rules.find(organizationId, winner.id));
    return {
      matched_rule: stored ? { id: stored.id, name: stored.name, assign_to_user_id: stored.assign_to_user_id, assign_to_team_id: stored.assign_to_team_id } : null,
      rules,
    };
  }

  /**
   * An assignee and team of the organization (404 otherwise), at least one of them, and
   * conditions the engine accepts. A person assigned by this change must be able to decide (a
   * viewer or a deactivated person: 422); one who no longer can since leaves the rule to be
   * changed in other ways (switched off, renamed).
   */
  private async check(tx: Tx, organizationId: number, fields: RoutingRuleFields, assigneeSet: boolean): Promise<void> {
    if (fields.action !== null) {
      if (fields.assign_to_user_id !== null || fields.assign_to_team_id !== null) {
        throw invalidInput('action', 'a rule either decides (action.auto_decide) or assigns (assign_to_user_id, assign_to_team_id), not both');
      }
    } else if (fields.assign_to_user_id === null && fields.assign_to_team_id === null) {
      throw invalidInput('assign_to_user_id', 'a rule assigns to a user (assign_to_user_id), a team (assign_to_team_id), or both');
    }
    if (fields.assign_to_user_id !== null) {
      const assignee = await this.people.findUser(organizationId, fields.assign_to_user_id, tx);
      if (!assignee) throw notFound('user', fields.assign_to_user_id);
      if (assigneeSet) requireDecider(assignee, 'assign_to_user_id', 'assign the rule to an active reviewer or admin');
    }
    if (fields.assign_to_team_id !== null && !(await this.people.findTeam(organizationId, fields.assign_to_team_id, tx))) throw notFound('team', fields.assign_to_team_id);
    if (fields.slack_channel_id !== null && !isSlackChannelId(fields.slack_channel_id)) throw invalidInput('slack_channel_id', SLACK_CHANNEL_ID_EXPECTED);
    try {
      compileRules([engineForm(fields, fields.assign_to_user_id === null ? null : 'assignee', fields.assign_to_team_id === null ? null : 'team')]);
    } catch (error) {
      if (error instanceof RuleError) throw invalidInput('conditions', error.message);
      throw error;
    }
  }
}

/**
 * An auto-decide rule's mode and audit sample rate, shadow and 5 % unless given (a rule that
 * decides is tried in shadow first); none for a rule that assigns. A rule keeps its own where a
 * change leaves them out.
 */
function decidingFields(
  action: RoutingRuleFields['action'],
  mode: RuleMode | undefined,
  rate: number | undefined,
  current: Pick<RoutingRuleFields, 'mode' | 'audit_sample_rate'> | null,
): Pick<RoutingRuleFields, 'action' | 'mode' | 'audit_sample_rate'> {
  if (action === null) {
    if (mode !== undefined || rate !== undefined) throw invalidInput('mode', 'and audit_sample_rate belong to a rule that decides (action.auto_decide)');
    return { action: null, mode: null, audit_sample_rate: null };
  }
  return { action, mode: mode ?? current?.mode ?? 'shadow', audit_sample_rate: rate ?? current?.audit_sample_rate ?? DEFAULT_AUDIT_SAMPLE_RATE };
}
