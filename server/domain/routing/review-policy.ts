/**
 * The review policy of the self-hosted edition (the `routing` setting): who gets a review,
 * which reviews decide themselves, and when an undecided review expires. Pure: the store and
 * the expiry timer carry it out.
 */
import { type AutoDecision, AUTO_DECISIONS, compileRules, firstMatch, type RoutableReview, type Rule, RuleError } from './conditions';
import { type Urgency, URGENCIES } from '../reviews/records';
import type { RuleMark } from './records';

export const EXPIRY_DECISIONS = AUTO_DECISIONS;

export interface Routing {
  /** The matching rule's name, or null (default reviewers, or no policy). */
  rule: string | null;
  assignTo: string | null;
  team: string | null;
  /** Reviewers to choose from (the least busy) when no rule matched. */
  candidates: string[];
  autoDecide: AutoDecision | null;
  /** Hosted edition: what an auto-decide rule that did not decide left on the review (shadow, or audit sample). */
  mark?: RuleMark | null;
}

export interface Policy {
  enabled: boolean;
  rules: readonly Rule[];
  defaultReviewers: readonly string[];
  /** Seconds a pending review of each urgency may wait; absent means no limit. */
  expirySeconds: Partial<Record<Urgency, number>>;
  onExpiry: AutoDecision;
}

export const NO_POLICY: Policy = { enabled: false, rules: [], defaultReviewers: [], expirySeconds: {}, onExpiry: 'reject' };

const POLICY_KEYS = ['enabled', 'rules', 'default_reviewers', 'expiry', 'on_expiry'];
const UNITS: Record<string, number> = { s: 1, m: 60, h: 3_600, d: 86_400 };
const MAX_EXPIRY_SECONDS = 365 * 86_400;

/** `90`, `"90s"`, `"15m"`, `"1h"`, `"7d"` → seconds. */
export function durationSeconds(where: string, raw: unknown): number {
  const match = typeof raw === 'string' ? /^\s*(\d+)\s*([smhd])\s*$/.exec(raw) : null;
  const seconds = typeof raw === 'number' ? raw : match ? Number(match[1]) * UNITS[match[2]] : NaN;
  if (!Number.isInteger(seconds) || seconds < 1 || seconds > MAX_EXPIRY_SECONDS) {
    throw new RuleError(`${where} must be a duration such as 900, "15m", "1h" or "7d" (at most 365 days), not ${JSON.stringify(raw)}`);
  }
  return seconds;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Validates the `routing` setting as written and compiles it; throws a `RuleError` that says what is wrong and where. */
export function compilePolicy(raw: unknown): Policy {
  if (raw === undefined || raw === null) return NO_POLICY;
  if (!isPlainObject(raw)) throw new RuleError(`must be a mapping with ${POLICY_KEYS.join(', ')}`);
  const unknown = Object.keys(raw).find((key) => !POLICY_KEYS.includes(key));
  if (unknown) throw new RuleError(`unknown key '${unknown}' (routing has ${POLICY_KEYS.join(', ')})`);
  if (raw.enabled !== undefined && typeof raw.enabled !== 'boolean') throw new RuleError('enabled must be true or false');

  const reviewers = raw.default_reviewers ?? [];
  if (!Array.isArray(reviewers) || !reviewers.every((r) => typeof r === 'string' && r.trim() !== '' && r.length <= 255)) {
    throw new RuleError('default_reviewers must be a list of reviewer identifiers (for example e-mail addresses)');
  }
  const expiry = raw.expiry ?? {};
  if (!isPlainObject(expiry)) throw new RuleError(`expiry must be a mapping of urgency (${URGENCIES.join(', ')}) to a duration`);
  const expirySeconds: Partial<Record<Urgency, number>> = {};
  for (const [urgency, duration] of Object.entries(expiry)) {
    if (!(URGENCIES as readonly string[]).includes(urgency)) throw new RuleError(`expiry: unknown urgency '${urgency}' (use ${URGENCIES.join(', ')})`);
    if (duration !== null) expirySeconds[urgency as Urgency] = durationSeconds(`expiry.${urgency}`, duration);
  }
  const onExpiry = raw.on_expiry ?? 'reject';
  if (!(EXPIRY_DECISIONS as readonly unknown[]).includes(onExpiry)) throw new RuleError('on_expiry must be reject or approve');

  return {
    enabled: raw.enabled ?? true,
    rules: compileRules(raw.rules),
    defaultReviewers: reviewers.map((r: string) => r.trim()),
    expirySeconds,
    onExpiry: onExpiry as AutoDecision,
  };
}

/** Where a new review goes: the first matching rule's action, else the default reviewers. */
export function routeReview(policy: Policy, review: RoutableReview): Routing {
  const none: Routing = { rule: null, assignTo: null, team: null, candidates: [], autoDecide: null };
  if (!policy.enabled) return none;
  const rule = firstMatch(policy.rules, review);
  if (!rule) return { ...none, candidates: [...policy.defaultReviewers] };
  if (rule.action.kind === 'auto_decide') return { ...none, rule: rule.name, autoDecide: rule.action.decision };
  return { ...none, rule: rule.name, assignTo: rule.action.assignTo, team: rule.action.team };
}

/** The Slack channel of the rule that routed a review (its `routing_rule`), or null. */
export function slackChannelOfRule(policy: Policy, ruleName: string | null): string | null {
  if (ruleName === null) return null;
  return policy.rules.find((rule) => rule.name === ruleName)?.slackChannelId ?? null;
}

/** When a review created at `createdAt` (epoch ms) expires, or null when its urgency has no limit. */
export function expiryTime(policy: Policy, urgency: Urgency, createdAt: number): number | null {
  const seconds = policy.enabled ? policy.expirySeconds[urgency] : undefined;
  return seconds === undefined ? null : createdAt + seconds * 1000;
}

/** "15 min", "1 h", "7 days": how people read a limit. */
export function describeDuration(seconds: number): string {
  if (seconds % 86_400 === 0) return seconds === 86_400 ? '1 day' : `${seconds / 86_400} days`;
  if (seconds % 3_600 === 0) return `${seconds / 3_600} h`;
  if (seconds % 60 === 0) return `${seconds / 60} min`;
  return `${seconds} s`;
}

/** The policy in a few lines, for `greenlight status` and the start-up log. */
export function describePolicy(policy: Policy): string[] {
  if (!policy.enabled) return ['routing is off (routing.enabled is false or routing is not set)'];
  const lines = policy.rules.map((rule, place) => {
    const action =
      rule.action.kind === 'auto_decide'
        ? `auto_decide ${rule.action.decision}`
        : [rule.action.assignTo && `assign_to ${rule.action.assignTo}`, rule.action.team && `assign_to_team ${rule.action.team}`, rule.slackChannelId && `slack_channel_id ${rule.slackChannelId}`].filter(Boolean).join(', ');
    return `${place + 1}. rule '${rule.name}' (priority ${rule.priority})${rule.isActive ? '' : ' [inactive]'}: ${action}`;
  });
  lines.unshift(policy.rules.length === 0 ? 'no rules' : 'rules, in the order they are tried (higher priority first; the first that matches wins):');
  lines.push(policy.defaultReviewers.length > 0 ? `default reviewers: ${policy.defaultReviewers.join(', ')}` : 'no default reviewers');
  const limits = [...URGENCIES].reverse().filter((u) => policy.expirySeconds[u] !== undefined).map((u) => `${u} ${describeDuration(policy.expirySeconds[u]!)}`);
  lines.push(limits.length > 0 ? `expiry: ${limits.join(', ')}; then ${policy.onExpiry}` : 'no expiry');
  return lines;
}
