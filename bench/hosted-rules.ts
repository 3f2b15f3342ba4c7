import { request, type ReviewBody, reviewBody } from './http';

/** One review in this many is governed by the organization's approval workflow. */
export const GOVERNED_EVERY = 10;

const RULES = 50;
const WORKFLOWS = 10;
const PEOPLE = 6;
const TEAMS = 3;

/** Task types the organization's other rules and workflows watch for; the bench files refunds. */
const OTHER_TASKS = ['payout', 'chargeback', 'account-closure', 'price-change', 'data-export'];

/**
 * The reviews the measured agent files in turn: `reviewBody`'s refunds of 250 EUR, one in
 * `GOVERNED_EVERY` of them of 2,500 EUR (the workflow's). No `agent_id`: the agent's key files
 * every review as its own.
 */
export function hostedBodies(): ReviewBody[] {
  return Array.from({ length: GOVERNED_EVERY }, (_, n) => {
    const { agent_id: _agent, ...body } = reviewBody(n);
    return n === 0 ? { ...body, metadata: { order: { id: n, total: 2500, currency: 'EUR' }, customer: { tier: 'gold' } } } : body;
  });
}

/**
 * Rule `i`'s conditions: on task type, urgency, metadata paths and confidence, as an
 * organization writes them. None holds for a refund of `hostedBodies` but the last two (the
 * lowest priorities), so every create tries the other 48 first.
 */
function ruleConditions(i: number): Record<string, unknown> {
  const task = OTHER_TASKS[i % OTHER_TASKS.length];
  if (i === RULES - 2) return { task_type: 'refund', 'metadata.order.total': { operator: '>=', value: 1000 } };
  if (i === RULES - 1) return { task_type: 'refund' };
  switch (i % 5) {
    case 0:
      return { task_type: task, urgency: 'critical' };
    case 1:
      return { task_type: { operator: 'in', value: [task, 'chargeback'] }, 'metadata.order.total': { operator: '>', value: 1000 + i * 100 } };
    case 2:
      return { task_type: task, confidence_score: { operator: '<', value: 0.3 + (i % 10) * 0.02 } };
    case 3:
      return { 'metadata.customer.tier': 'platinum', urgency: { operator: 'in', value: ['high', 'critical'] } };
    default:
      return { framework: 'crewai', 'metadata.order.currency': { operator: 'not_in', value: ['EUR', 'GBP'] } };
  }
}

async function created(url: string, path: string, body: unknown, key: string): Promise<any> {
  const answer = await request(`${url}${path}`, 'POST', body, { headers: { authorization: `Bearer ${key}` } });
  if (answer.status !== 201) throw new Error(`POST ${path} answered ${answer.status}: ${JSON.stringify(answer.body)}`);
  return answer.body;
}

/**
 * Gives an organization people, teams, 50 routing rules (half to a person, half to a team) and
 * 10 workflows (the last, tried after the others, governs refunds of 1,000 or more).
 */
async function configure(url: string, adminKey: string): Promise<void> {
  const people: number[] = [];
  for (let n = 0; n < PEOPLE; n += 1) people.push((await created(url, '/users', { email: `reviewer${n}@bench.example`, name: `Reviewer ${n}`, role: 'reviewer' }, adminKey)).id);
  const teams: number[] = [];
  for (let n = 0; n < TEAMS; n += 1) teams.push((await created(url, '/teams', { name: `Team ${n}`, member_ids: [people[2 * n], people[2 * n + 1]] }, adminKey)).id);
  for (let i = 0; i < RULES; i += 1) {
    const assignee = i % 2 === 0 ? { assign_to_user_id: people[i % PEOPLE] } : { assign_to_team_id: teams[i % TEAMS] };
    await created(url, '/routing-rules', { name: `rule ${i}`, priority: 1000 - i * 10, conditions: ruleConditions(i), ...assignee }, adminKey);
  }
  for (let i = 0; i < WORKFLOWS; i += 1) {
    const governing = i === WORKFLOWS - 1;
    const conditions = governing
      ? { task_type: 'refund', 'metadata.order.total': { operator: '>=', value: 1000 } }
      : { task_type: OTHER_TASKS[i % OTHER_TASKS.length], 'metadata.order.total': { operator: '>', value: 5000 + i * 1000 } };
    const stages = [{ name: 'finance', approvers: { team_id: teams[i % TEAMS] }, required_approvals: 1 }];
    await created(url, '/workflows', { name: `workflow ${i}`, conditions, stages }, adminKey);
  }
}

/**
 * Makes, on a hosted server, an organization (with its rules and workflows, or none) and an
 * agent with a key of its own: that key.
 */
export async function organizationAgentKey(url: string, operatorKey: string, { withRules }: { withRules: boolean }): Promise<string> {
  const { organization, api_key: admin } = await created(url, '/organizations', { name: withRules ? 'Bench rules' : 'Bench no rules' }, operatorKey);
  if (withRules) await configure(url, admin.key);
  const agent = await created(url, '/agents', { name: 'refund-bot' }, admin.key);
  const key = await created(url, `/organizations/${organization.id}/api-keys`, { name: 'refund-bot', scope: 'agent', agent_id: agent.id }, admin.key);
  return key.key as string;
}
