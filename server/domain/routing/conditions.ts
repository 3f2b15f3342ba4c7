/**
 * The routing rule engine: pure functions, no I/O. The self-hosted edition reads rules from
 * its configuration file; the hosted edition will read the same shape from its database.
 */
import { type Metadata, type ReviewInput, type Urgency, URGENCIES } from '../reviews/records';

export const OPERATORS = ['=', '!=', '<', '<=', '>', '>=', 'in', 'not_in', 'contains', 'matches'] as const;
export type Operator = (typeof OPERATORS)[number];

/** Top-level review fields a condition may test; anything else is a dotted path into `metadata`. */
export const RULE_FIELDS = ['task_type', 'proposed_action', 'agent_reasoning', 'confidence_score', 'urgency', 'framework', 'agent_id', 'organization_id'] as const;

export const AUTO_DECISIONS = ['approve', 'reject'] as const;
export type AutoDecision = (typeof AUTO_DECISIONS)[number];

/** The longest regular expression a `matches` condition may hold. */
export const MAX_PATTERN_LENGTH = 500;
/** `matches` looks at this many characters of a field at most (an action may be 100,000). */
const MAX_MATCHED_TEXT = 10_000;

/** The fields of a review that rules look at. */
export type RoutableReview = Pick<ReviewInput, 'task_type' | 'proposed_action'> &
  Partial<Pick<ReviewInput, 'agent_reasoning' | 'confidence_score' | 'urgency' | 'framework' | 'agent_id' | 'organization_id'>> & {
    metadata?: Metadata | null;
  };

export type RuleAction =
  | { kind: 'assign'; assignTo: string | null; team: string | null }
  | { kind: 'auto_decide'; decision: AutoDecision };

/** One condition of a rule tried on one review: what it asked, what the review had, whether it held. */
export interface ConditionResult {
  field: string;
  operator: Operator;
  value: unknown;
  /** The review's value (undefined: the field is absent). */
  actual: unknown;
  holds: boolean;
}

export interface Rule {
  name: string;
  priority: number;
  isActive: boolean;
  action: RuleAction;
  /** The Slack channel the reviews this rule routes are posted to (self-hosted policy), or null. */
  slackChannelId: string | null;
  matches(review: RoutableReview): boolean;
  /** Every condition on `review`, for showing why a rule matched or did not. */
  explain(review: RoutableReview): ConditionResult[];
}

export class RuleError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'RuleError';
  }
}

type Scalar = string | number | boolean;

function isScalar(value: unknown): value is Scalar {
  return typeof value === 'string' || (typeof value === 'number' && Number.isFinite(value)) || typeof value === 'boolean';
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The value at a condition's path (as its steps), or undefined when it (or any step of a metadata path) is absent or null. */
function fieldValue(review: RoutableReview, steps: readonly string[]): unknown {
  const head = steps[0];
  let value: unknown = head === 'metadata' ? review.metadata : (review as Record<string, unknown>)[head];
  // An index loop, the steps split once when the rule was compiled: every create tries every rule.
  for (let i = 1; i < steps.length; i += 1) {
    if (!isPlainObject(value) && !Array.isArray(value)) return undefined;
    const step = steps[i];
    value = Object.hasOwn(value, step) ? (value as Record<string, unknown>)[step] : undefined;
  }
  return value ?? undefined;
}

const URGENCY_RANK: Record<Urgency, number> = { low: 0, medium: 1, high: 2, critical: 3 };

function isUrgency(value: unknown): value is Urgency {
  return typeof value === 'string' && (URGENCIES as readonly string[]).includes(value);
}

/** Same type and equal; a number never equals a string. */
function same(a: unknown, b: unknown): boolean {
  return typeof a === typeof b && a === b;
}

/** Negative, zero or positive; null when the two cannot be ordered (different types). */
function order(field: string, actual: unknown, expected: Scalar): number | null {
  if (field === 'urgency' && isUrgency(actual) && isUrgency(expected)) return URGENCY_RANK[actual] - URGENCY_RANK[expected];
  if (typeof actual === 'number' && typeof expected === 'number') return actual - expected;
  if (typeof actual === 'string' && typeof expected === 'string') return actual < expected ? -1 : actual > expected ? 1 : 0;
  return null;
}

type Test = (actual: unknown) => boolean;

function orderingTest(field: string, expected: Scalar, holds: (comparison: number) => boolean): Test {
  return (actual) => {
    const comparison = order(field, actual, expected);
    return comparison !== null && holds(comparison);
  };
}

/**
 * A regular expression whose quantified group itself holds a quantifier (`(a+)+`, `(\w*)*`)
 * can take exponential time on a near-miss; such patterns are refused at load.
 */
function hasNestedQuantifier(pattern: string): boolean {
  return /\((?:[^()\\]|\\.)*[+*}](?:[^()\\]|\\.)*\)[+*{]/.test(pattern);
}

function compilePattern(where: string, value: unknown): RegExp {
  if (typeof value !== 'string' || value === '') throw new RuleError(`${where}: matches needs a regular expression as a non-empty string`);
  if (value.length > MAX_PATTERN_LENGTH) throw new RuleError(`${where}: the regular expression is longer than ${MAX_PATTERN_LENGTH} characters`);
  if (hasNestedQuantifier(value)) throw new RuleError(`${where}: the regular expression nests quantifiers (like (a+)+), which can take exponential time`);
  try {
    return new RegExp(value, 'u');
  } catch (error) {
    throw new RuleError(`${where}: invalid regular expression: ${(error as Error).message}`);
  }
}

function scalarValue(where: string, operator: Operator, value: unknown): Scalar {
  if (!isScalar(value)) throw new RuleError(`${where}: ${operator} needs a string, number or boolean value, not ${JSON.stringify(value)}`);
  return value;
}

function listValue(where: string, operator: Operator, value: unknown): Scalar[] {
  if (!Array.isArray(value) || value.length === 0 || !value.every(isScalar)) {
    throw new RuleError(`${where}: ${operator} needs a non-empty list of strings, numbers or booleans`);
  }
  return value;
}

function compileTest(where: string, field: string, operator: Operator, value: unknown): Test {
  switch (operator) {
    case '=': {
      const expected = scalarValue(where, operator, value);
      return (actual) => same(actual, expected);
    }
    case '!=': {
      const expected = scalarValue(where, operator, value);
      return (actual) => !same(actual, expected);
    }
    case '<':
      return orderingTest(field, scalarValue(where, operator, value), (c) => c < 0);
    case '<=':
      return orderingTest(field, scalarValue(where, operator, value), (c) => c <= 0);
    case '>':
      return orderingTest(field, scalarValue(where, operator, value), (c) => c > 0);
    case '>=':
      return orderingTest(field, scalarValue(where, operator, value), (c) => c >= 0);
    case 'in': {
      const list = listValue(where, operator, value);
      return (actual) => list.some((item) => same(actual, item));
    }
    case 'not_in': {
      const list = listValue(where, operator, value);
      return (actual) => !list.some((item) => same(actual, item));
    }
    case 'contains': {
      const expected = scalarValue(where, operator, value);
      return (actual) =>
        typeof actual === 'string' ? typeof expected === 'string' && actual.includes(expected) : Array.isArray(actual) && actual.some((item) => same(item, expected));
    }
    case 'matches': {
      const pattern = compilePattern(where, value);
      return (actual) => typeof actual === 'string' && pattern.test(actual.slice(0, MAX_MATCHED_TEXT));
    }
  }
}

/** A missing field matches only the negative operators: it is not equal to, and not in, anything. */
const MATCHES_WHEN_MISSING: ReadonlySet<Operator> = new Set(['!=', 'not_in']);

function checkField(where: string, path: string): void {
  if ((RULE_FIELDS as readonly string[]).includes(path)) return;
  if (/^metadata(\.[^.\s]+)+$/.test(path)) return;
  throw new RuleError(`${where}: unknown field '${path}' (use one of ${RULE_FIELDS.join(', ')}, or metadata.<key>)`);
}

/**
 * One condition. Written `{operator, value}`; a bare value is short for `=` and a bare list
 * for `in`, so `task_type: refund` reads as it should.
 */
function compileCondition(ruleWhere: string, path: string, raw: unknown): { test: Test; operator: Operator; value: unknown } {
  const where = `${ruleWhere}, condition on ${path}`;
  checkField(where, path);
  let operator: unknown = Array.isArray(raw) ? 'in' : '=';
  let value: unknown = raw;
  if (isPlainObject(raw)) {
    const extra = Object.keys(raw).filter((key) => key !== 'operator' && key !== 'value');
    if (extra.length > 0 || !('operator' in raw) || !('value' in raw)) {
      throw new RuleError(`${where}: write it as {operator, value}${extra.length > 0 ? ` (unknown key ${extra[0]})` : ''}`);
    }
    ({ operator, value } = raw);
  }
  if (!(OPERATORS as readonly unknown[]).includes(operator)) {
    throw new RuleError(`${where}: unknown operator ${JSON.stringify(operator)} (use one of ${OPERATORS.join(' ')})`);
  }
  const test = compileTest(where, path, operator as Operator, value);
  const whenMissing = MATCHES_WHEN_MISSING.has(operator as Operator);
  return { test: (actual) => (actual === undefined ? whenMissing : test(actual)), operator: operator as Operator, value };
}

function optionalText(where: string, key: string, value: unknown): string | null {
  if (value === undefined || value === null) return null;
  if (typeof value !== 'string' || value.trim() === '' || value.length > 255) throw new RuleError(`${where}: ${key} must be a non-empty string of at most 255 characters`);
  return value.trim();
}

function compileAction(where: string, raw: Record<string, unknown>): RuleAction {
  const assignTo = optionalText(where, 'assign_to', raw.assign_to);
  const team = optionalText(where, 'assign_to_team', raw.assign_to_team);
  const autoDecide = raw.auto_decide ?? null;
  if (autoDecide !== null) {
    if (!(AUTO_DECISIONS as readonly unknown[]).includes(autoDecide)) throw new RuleError(`${where}: auto_decide must be approve or reject`);
    if (assignTo !== null || team !== null) throw new RuleError(`${where}: a rule either assigns (assign_to, assign_to_team) or decides (auto_decide), not both`);
    return { kind: 'auto_decide', decision: autoDecide as AutoDecision };
  }
  if (assignTo === null && team === null) throw new RuleError(`${where}: the rule has no action: give assign_to, assign_to_team or auto_decide`);
  return { kind: 'assign', assignTo, team };
}

const RULE_KEYS = ['name', 'priority', 'conditions', 'assign_to', 'assign_to_team', 'auto_decide', 'is_active', 'slack_channel_id'];

/** What a rule's `slack_channel_id` must be, as the refusal says. */
export const SLACK_CHANNEL_ID_EXPECTED = 'must be a Slack channel id such as C0123456789';

/** A Slack conversation id: a channel (C…), a private channel (G…) or a direct message (D…). */
export function isSlackChannelId(value: string): boolean {
  return /^[CGD][A-Z0-9]{2,40}$/.test(value);
}

function slackChannelOf(where: string, value: unknown): string | null {
  if (value === undefined || value === null) return null;
  if (typeof value !== 'string' || !isSlackChannelId(value.trim())) throw new RuleError(`${where}: slack_channel_id ${SLACK_CHANNEL_ID_EXPECTED}`);
  return value.trim();
}

function compileRule(raw: unknown, index: number, names: Set<string>): Rule {
  const anonymous = `rule ${index + 1}`;
  if (!isPlainObject(raw)) throw new RuleError(`${anonymous}: must be a mapping with name, priority, conditions and an action`);
  if (typeof raw.name !== 'string' || raw.name.trim() === '' || raw.name.length > 100) {
    throw new RuleError(`${anonymous}: name must be a non-empty string of at most 100 characters`);
  }
  const name = raw.name.trim();
  const where = `rule '${name}'`;
  if (names.has(name)) throw new RuleError(`${where}: the name is used by an earlier rule`);
  names.add(name);
  const unknown = Object.keys(raw).find((key) => !RULE_KEYS.includes(key));
  if (unknown) throw new RuleError(`${where}: unknown key '${unknown}' (a rule has ${RULE_KEYS.join(', ')})`);
  if (typeof raw.priority !== 'number' || !Number.isSafeInteger(raw.priority)) {
    throw new RuleError(`${where}: priority must be an integer (higher runs first), not ${JSON.stringify(raw.priority)}`);
  }
  if (raw.is_active !== undefined && typeof raw.is_active !== 'boolean') throw new RuleError(`${where}: is_active must be true or false`);
  const conditions = raw.conditions ?? {};
  if (!isPlainObject(conditions)) throw new RuleError(`${where}: conditions must be a mapping of field to {operator, value}`);
  const tests = Object.entries(conditions).map(([path, condition]) => ({ path, steps: path.split('.'), ...compileCondition(where, path, condition) }));
  return {
    name,
    priority: raw.priority,
    isActive: raw.is_active ?? true,
    action: compileAction(where, raw),
    slackChannelId: slackChannelOf(where, raw.slack_channel_id),
    matches: (review) => tests.every(({ steps, test }) => test(fieldValue(review, steps))),
    explain: (review) =>
      tests.map(({ path, steps, test, operator, value }) => {
        const actual = fieldValue(review, steps);
        return { field: path, operator, value, actual, holds: test(actual) };
      }),
  };
}

/**
 * Validates and compiles rules (regular expressions once, here), sorted for evaluation:
 * the higher priority first, ties in the order written (the order the source project's
 * platform used, so clients written for it keep their meaning). Throws a `RuleError` naming
 * the rule.
 */
export function compileRules(raw: unknown): Rule[] {
  if (raw === undefined || raw === null) return [];
  if (!Array.isArray(raw)) throw new RuleError('rules must be a list');
  const names = new Set<string>();
  const rules = raw.map((definition, index) => ({ rule: compileRule(definition, index, names), index }));
  rules.sort((a, b) => b.rule.priority - a.rule.priority || a.index - b.index);
  return rules.map(({ rule }) => rule);
}

/** The first active rule, in evaluation order, whose conditions all hold. */
export function firstMatch(rules: readonly Rule[], review: RoutableReview): Rule | null {
  return rules.find((rule) => rule.isActive && rule.matches(review)) ?? null;
}
