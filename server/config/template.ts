import YAML from 'yaml';
import { type Config, SETTINGS, environmentName } from './settings';

/** A working example, switched off: reviews are neither routed nor expired until `enabled: true`. */
const EXAMPLE_POLICY = `routing:
  enabled: false
  # The first matching rule wins: the higher priority number is tried first, ties in the
  # order written (greenlight status prints the order).
  # A condition is field: {operator, value}; every condition of a rule must hold.
  # Fields: task_type, proposed_action, agent_reasoning, confidence_score, urgency, framework,
  # agent_id, organization_id, or metadata.<key>[.<key>...].
  # Operators: = != < <= > >= in not_in contains matches (a regular expression).
  # Actions: assign_to and/or assign_to_team, or auto_decide: approve | reject.
  rules:
    - name: confident-tagging
      priority: 100
      conditions:
        task_type: { operator: in, value: [tag_ticket, label_email] }
        confidence_score: { operator: ">=", value: 0.98 }
      auto_decide: approve
    - name: large-refunds
      priority: 10
      conditions:
        task_type: { operator: "=", value: refund }
        metadata.amount: { operator: ">", value: 1000 }
      assign_to: finance-lead@example.com
      assign_to_team: finance
  # Reviews no rule matched go to the least busy of these.
  default_reviewers: [reviewer@example.com]
  # How long a pending review may wait, per urgency (leave one out for no limit),
  # and the decision it then gets (reject fails safe).
  expiry:
    critical: 15m
    high: 1h
    medium: 24h
    low: 7d
  on_expiry: reject`;

/** The commented `greenlight.yaml` that `greenlight init` writes: every setting at its default, but for `values`. */
export function configTemplate(values: Partial<Config> = {}): string {
  const lines = [
    values.edition === 'hosted' ? '# Greenlight configuration, hosted edition: set GREENLIGHT_OPERATOR_KEY, then greenlight org create.' : '# Greenlight configuration. Every setting is shown with its default.',
    '# Each one can be overridden by an environment variable GREENLIGHT_<KEY IN CAPITALS>',
    '# (for example GREENLIGHT_API_PORT=9000); command-line flags override both.',
    '',
  ];
  for (const s of SETTINGS) {
    lines.push(`# ${s.comment} (${environmentName(s.key)})`);
    lines.push(s.key === 'routing' ? EXAMPLE_POLICY : YAML.stringify({ [s.key]: values[s.key] ?? s.defaultValue }).trimEnd());
    lines.push('');
  }
  return lines.join('\n');
}
