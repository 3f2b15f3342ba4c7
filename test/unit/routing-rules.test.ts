import { describe, expect, it } from 'vitest';
import { compilePolicy, describePolicy, expiryTime, routeReview, slackChannelOfRule } from '../../server/domain/routing/review-policy';
import { compileRules, firstMatch, type RoutableReview, RuleError } from '../../server/domain/routing/conditions';

const review: RoutableReview = {
  task_type: 'refund',
  proposed_action: 'Refund order 1042 in full (EUR 250.00)',
  agent_reasoning: 'Parcel lost',
  confidence_score: 0.9,
  urgency: 'high',
  framework: 'langchain',
  agent_id: 7,
  organization_id: null,
  metadata: { amount: 250, currency: 'EUR', customer: { tier: 'gold', since: 2019 }, tags: ['vip', 'eu'], flagged: false, note: null },
};

/** Whether one rule with this single condition matches `review`. */
function holds(field: string, condition: unknown, subject: RoutableReview = review): boolean {
  const rules = compileRules([{ name: 'r', priority: 1, conditions: { [field]: condition }, assign_to: 'x@example.com' }]);
  return firstMatch(rules, subject) !== null;
}

describe('conditions', () => {
  it.each([
    // [field, operator, value, expected]
    ['task_type', '=', 'refund', true],
    ['task_type', '=', 'Refund', false],
    ['task_type', '!=', 'email', true],
    ['task_type', '!=', 'refund', false],
    ['confidence_score', '<', 0.95, true],
    ['confidence_score', '<', 0.9, false],
    ['confidence_score', '<=', 0.9, true],
    ['confidence_score', '>', 0.9, false],
    ['confidence_score', '>=', 0.9, true],
    ['agent_id', '=', 7, true],
    ['task_type', 'in', ['email', 'refund'], true],
    ['task_type', 'in', ['email', 'deploy'], false],
    ['task_type', 'not_in', ['email', 'deploy'], true],
    ['task_type', 'not_in', ['refund'], false],
    ['proposed_action', 'contains', 'EUR 250', true],
    ['proposed_action', 'contains', 'eur 250', false],
    ['proposed_action', 'matches', '^Refund order \\d+ in full', true],
    ['proposed_action', 'matches', '^Delete', false],
    ['framework', '=', 'langchain', true],
    ['urgency', '>=', 'high', true],
    ['urgency', '>', 'high', false],
    ['urgency', '<', 'critical', true],
    ['urgency', 'in', ['high', 'critical'], true],
  ])('%s %s %j → %s', (field, operator, value, expected) => {
    expect(holds(field, { operator, value })).toBe(expected);
  });

  it.each([
    ['metadata.amount', '>', 100, true],
    ['metadata.amount', '>', 1000, false],
    ['metadata.customer.tier', '=', 'gold', true],
    ['metadata.customer.since', '<', 2020, true],
    ['metadata.tags', 'contains', 'vip', true],
    ['metadata.tags', 'contains', 'us', false],
    ['metadata.flagged', '=', false, true],
    ['metadata.customer.tier', 'in', ['silver', 'gold'], true],
  ])('metadata path %s %s %j → %s', (field, operator, value, expected) => {
    expect(holds(field, { operator, value })).toBe(expected);
  });

  it.each([
    ['=', 'x', false],
    ['<', 1, false],
    ['>=', 0, false],
    ['in', ['x'], false],
    ['contains', 'x', false],
    ['matches', '.*', false],
    ['!=', 'x', true],
    ['not_in', ['x'], true],
  ])('a missing field never matches %s, except the negative operators', (operator, value, expected) => {
    expect(holds('metadata.absent', { operator, value })).toBe(expected);
    expect(holds('metadata.customer.absent.deeper', { operator, value })).toBe(expected);
    // A JSON null counts as missing, like an unset top-level field.
    expect(holds('metadata.note', { operator, value })).toBe(expected);
    expect(holds('organization_id', { operator, value })).toBe(expected);
  });

  it.each([
    ['metadata.amount', '=', '250'],
    ['metadata.amount', '>', '100'],
    ['metadata.amount', '<=', '9999'],
    ['metadata.currency', '>', 5],
    ['metadata.amount', 'in', ['250']],
    ['metadata.amount', 'contains', '2'],
    ['metadata.amount', 'matches', '250'],
    ['metadata.customer', '=', 'gold'],
  ])('comparing values of different types does not match and does not throw: %s %s %j', (field, operator, value) => {
    expect(holds(field, { operator, value })).toBe(false);
  });

  it('accepts a bare value as = and a bare list as in', () => {
    expect(holds('task_type', 'refund')).toBe(true);
    expect(holds('task_type', ['email', 'refund'])).toBe(true);
    expect(holds('task_type', 'email')).toBe(false);
  });

  it('requires every condition of a rule', () => {
    const rules = compileRules([
      { name: 'both', priority: 1, conditions: { task_type: 'refund', 'metadata.amount': { operator: '>', value: 1000 } }, assign_to: 'a' },
    ]);
    expect(firstMatch(rules, review)).toBeNull();
    expect(firstMatch(rules, { ...review, metadata: { amount: 5000 } })?.name).toBe('both');
  });

  it('looks at no more than the first 10,000 characters for matches', () => {
    const long = { ...review, proposed_action: `${'a'.repeat(20_000)}needle` };
    expect(holds('proposed_action', { operator: 'matches', value: 'needle' }, long)).toBe(false);
  });
});

describe('rule order', () => {
  const rules = compileRules([
    { name: 'inactive-late', priority: 1, conditions: {}, assign_to: 'nobody@example.com', is_active: false },
    { name: 'first-of-tie', priority: 5, conditions: { task_type: 'refund' }, assign_to: 'a@example.com' },
    { name: 'second-of-tie', priority: 5, conditions: { task_type: 'refund' }, assign_to: 'b@example.com' },
    { name: 'early', priority: 10, conditions: { task_type: 'refund' }, assign_to: 'early@example.com' },
  ]);

  it('evaluates the higher priority first (10 before 1), ties in the order written, skipping inactive rules', () => {
    expect(rules.map((rule) => rule.name)).toEqual(['early', 'first-of-tie', 'second-of-tie', 'inactive-late']);
    expect(firstMatch(rules, review)?.name).toBe('early');
    expect(firstMatch(rules.filter((rule) => rule.name !== 'early'), review)?.name).toBe('first-of-tie');
  });

  it('matches nothing when no active rule holds', () => {
    expect(firstMatch(rules, { ...review, task_type: 'email' })).toBeNull();
  });
});

describe('validation at load', () => {
  it.each([
    [{ name: 'r', priority: 1, conditions: { task_type: { operator: '=~', value: 'x' } }, assign_to: 'a' }, "rule 'r', condition on task_type: unknown operator \"=~\""],
    [{ name: 'r', priority: 1, conditions: { task_type: { operator: 'matches', value: '(' } }, assign_to: 'a' }, "rule 'r', condition on task_type: invalid regular expression"],
    [{ name: 'r', priority: 1, conditions: { task_type: { operator: 'matches', value: '(a+)+$' } }, assign_to: 'a' }, 'nests quantifiers'],
    [{ name: 'r', priority: 1, conditions: { task_type: { operator: 'matches', value: 'x'.repeat(501) } }, assign_to: 'a' }, 'longer than 500 characters'],
    [{ name: 'r', priority: 1, conditions: { amount: { operator: '>', value: 1 } }, assign_to: 'a' }, "unknown field 'amount'"],
    [{ name: 'r', priority: 'high', conditions: {}, assign_to: 'a' }, "rule 'r': priority must be an integer"],
    [{ name: 'r', priority: 1.5, conditions: {}, assign_to: 'a' }, "rule 'r': priority must be an integer"],
    [{ name: 'r', priority: 1, conditions: { task_type: 'x' } }, "rule 'r': the rule has no action"],
    [{ name: 'r', priority: 1, conditions: {}, auto_decide: 'approve', assign_to: 'a' }, 'either assigns'],
    [{ name: 'r', priority: 1, conditions: {}, auto_decide: 'maybe' }, 'auto_decide must be approve or reject'],
    [{ name: 'r', priority: 1, conditions: { task_type: { operator: 'in', value: 'refund' } }, assign_to: 'a' }, 'in needs a non-empty list'],
    [{ name: 'r', priority: 1, conditions: { task_type: { operator: '<', value: { a: 1 } } }, assign_to: 'a' }, '< needs a string, number or boolean'],
    [{ name: 'r', priority: 1, conditions: { task_type: { op: '=', value: 'x' } }, assign_to: 'a' }, 'write it as {operator, value}'],
    [{ name: 'r', priority: 1, condition: {}, assign_to: 'a' }, "unknown key 'condition'"],
    [{ priority: 1, conditions: {}, assign_to: 'a' }, 'rule 1: name must be'],
  ])('refuses %j with one clear line', (rule, message) => {
    expect(() => compileRules([rule])).toThrow(RuleError);
    expect(() => compileRules([rule])).toThrow(message);
  });

  it('refuses two rules of the same name', () => {
    const rule = { name: 'twice', priority: 1, conditions: {}, assign_to: 'a' };
    expect(() => compileRules([rule, rule])).toThrow("rule 'twice': the name is used by an earlier rule");
  });
});

describe('the policy', () => {
  const policy = compilePolicy({
    rules: [
      { name: 'confident-tagging', priority: 100, conditions: { task_type: 'tag', confidence_score: { operator: '>=', value: 0.98 } }, auto_decide: 'approve' },
      { name: 'big-refunds', priority: 10, conditions: { task_type: 'refund', 'metadata.amount': { operator: '>', value: 1000 } }, assign_to: 'fin@example.com', assign_to_team: 'finance' },
    ],
    default_reviewers: ['a@example.com', 'b@example.com'],
    expiry: { critical: '15m', high: '1h', medium: 86_400 },
    on_expiry: 'reject',
  });

  it('routes to the first matching rule, or to the default reviewers when none matches', () => {
    expect(routeReview(policy, { ...review, metadata: { amount: 5000 } })).toEqual({
      rule: 'big-refunds',
      assignTo: 'fin@example.com',
      team: 'finance',
      candidates: [],
      autoDecide: null,
    });
    expect(routeReview(policy, { task_type: 'tag', proposed_action: 'tag #5', confidence_score: 0.99 })).toMatchObject({ rule: 'confident-tagging', autoDecide: 'approve' });
    expect(routeReview(policy, { task_type: 'tag', proposed_action: 'tag #5', confidence_score: 0.5 })).toEqual({
      rule: null,
      assignTo: null,
      team: null,
      candidates: ['a@example.com', 'b@example.com'],
      autoDecide: null,
    });
  });

  it('sets expiry per urgency, with no limit where none is given', () => {
    expect(expiryTime(policy, 'critical', 1_000)).toBe(1_000 + 900_000);
    expect(expiryTime(policy, 'high', 0)).toBe(3_600_000);
    expect(expiryTime(policy, 'low', 0)).toBeNull();
  });

  it('does nothing while switched off', () => {
    const off = compilePolicy({ enabled: false, rules: [{ name: 'all', priority: 1, conditions: {}, auto_decide: 'reject' }], expiry: { low: '1h' } });
    expect(routeReview(off, review)).toMatchObject({ rule: null, autoDecide: null, candidates: [] });
    expect(expiryTime(off, 'low', 0)).toBeNull();
    expect(describePolicy(off)[0]).toMatch(/routing is off/);
  });

  it('describes itself for greenlight status', () => {
    expect(describePolicy(policy)).toEqual([
      'rules, in the order they are tried (higher priority first; the first that matches wins):',
      "1. rule 'confident-tagging' (priority 100): auto_decide approve",
      "2. rule 'big-refunds' (priority 10): assign_to fin@example.com, assign_to_team finance",
      'default reviewers: a@example.com, b@example.com',
      'expiry: critical 15 min, high 1 h, medium 1 day; then reject',
    ]);
  });

  it.each([
    [{ expiry: { critical: '15 minutes' } }, 'expiry.critical must be a duration'],
    [{ expiry: { urgent: '1h' } }, "expiry: unknown urgency 'urgent'"],
    [{ on_expiry: 'ignore' }, 'on_expiry must be reject or approve'],
    [{ default_reviewers: 'a@example.com' }, 'default_reviewers must be a list'],
    [{ rule: [] }, "unknown key 'rule'"],
  ])('refuses %j', (raw, message) => {
    expect(() => compilePolicy(raw)).toThrow(message);
  });
});

describe('slack_channel_id on a rule of the routing setting', () => {
  it('names the channel the rule\'s reviews are posted to, and must be a channel id', () => {
    const policy = compilePolicy({ rules: [{ name: 'payments', priority: 1, assign_to: 'finance@example.com', slack_channel_id: 'C0FINANCE' }, { name: 'rest', priority: 0, assign_to: 'ops@example.com' }] });
    expect(slackChannelOfRule(policy, 'payments')).toBe('C0FINANCE');
    expect(slackChannelOfRule(policy, 'rest')).toBeNull();
    expect(slackChannelOfRule(policy, null)).toBeNull();
    expect(() => compilePolicy({ rules: [{ name: 'x', priority: 1, assign_to: 'a', slack_channel_id: '#payments' }] })).toThrow("rule 'x': slack_channel_id must be a Slack channel id such as C0123456789");
  });
});
