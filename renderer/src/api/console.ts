/**
 * The account console's calls of the API (hosted edition): the organization, its API keys,
 * people, teams, agents and audit log. Records are the server's own types (types only), so the
 * console and the API cannot disagree on a field.
 */
import type {
  AgentRecord,
  ApiKeyRecord,
  AuditActor,
  AuditRecord,
  AuditVerification,
  OrganizationRecord,
  RoutingRuleFields,
  RoutingRuleRecord,
  TeamRecord,
  UserRecord,
  WorkflowFields,
  WorkflowRecord,
} from '../../../server/domain/ports';
import type { ReviewPage, ReviewRecord, WebhookDeliveryRecord, WebhookRecord } from '../../../server/domain/records';

export type { WebhookDeliveryRecord, WebhookRecord };
import type { ConditionResult } from '../../../server/domain/routing-rules';
import type { ApiClient } from './client';

// The records the console's pages show, as the server defines them (types only).
export type * from '../../../server/domain/ports';

// The request bodies are built from the records rather than imported from the server's
// services, whose modules would bring their Node imports into the dashboard's type check.
export type OrganizationChanges = Partial<Pick<OrganizationRecord, 'name' | 'settings'>>;
export type ApiKeyInput = Pick<ApiKeyRecord, 'name' | 'scope'> & { agent_id?: number | null };
/** A new API key: the record and, this once, the key itself. */
export type CreatedApiKey = ApiKeyRecord & { key: string };
export type UserInput = Pick<UserRecord, 'email' | 'name' | 'role'>;
export type UserChanges = Partial<Pick<UserRecord, 'name' | 'role' | 'is_active'>>;
export type TeamInput = Pick<TeamRecord, 'name'> & { member_ids?: number[] };
export type AgentInput = Pick<AgentRecord, 'name'> & Partial<Pick<AgentRecord, 'framework' | 'description' | 'metadata'>>;

export const CONSOLE_SECTIONS = ['organization', 'api-keys', 'users', 'teams', 'agents', 'routing-rules', 'workflows', 'webhooks', 'audit-log'] as const;
/** A page of the console, as its address names it: `#/console/api-keys`. */
export type ConsoleSection = (typeof CONSOLE_SECTIONS)[number];

export const CONSOLE_SECTION_TITLES: Record<ConsoleSection, string> = {
  organization: 'Organization',
  'api-keys': 'API keys',
  users: 'Users',
  teams: 'Teams',
  agents: 'Agents',
  'routing-rules': 'Routing rules',
  workflows: 'Workflows',
  webhooks: 'Webhooks',
  'audit-log': 'Audit log',
};

/** The events an endpoint may receive, as the API names them. */
export const WEBHOOK_EVENTS = ['review.created', 'review.decided', 'review.expired', 'review.vote', 'feedback.created', 'attachment.created', 'attachment.deleted'] as const;

export async function listWebhooks(api: ApiClient): Promise<WebhookRecord[]> {
  return (await api.request<{ webhooks: WebhookRecord[] }>('/webhooks')).webhooks;
}

export function createWebhook(api: ApiClient, input: { url: string; events: string[]; description: string | null }): Promise<WebhookRecord & { secret: string }> {
  return api.request('/webhooks', { method: 'POST', body: input });
}

export function updateWebhook(api: ApiClient, id: number, changes: Partial<Pick<WebhookRecord, 'url' | 'events' | 'description' | 'is_active'>>): Promise<WebhookRecord> {
  return api.request(`/webhooks/${id}`, { method: 'PATCH', body: changes });
}

export function deleteWebhook(api: ApiClient, id: number): Promise<void> {
  return api.request(`/webhooks/${id}`, { method: 'DELETE' });
}

export function rotateWebhookSecret(api: ApiClient, id: number): Promise<{ secret: string; previous_secret_expires_at: string }> {
  return api.request(`/webhooks/${id}/rotate-secret`, { method: 'POST' });
}

export function testWebhook(api: ApiClient, id: number): Promise<{ message_id: string }> {
  return api.request(`/webhooks/${id}/test`, { method: 'POST' });
}

export async function listWebhookDeliveries(api: ApiClient, id: number): Promise<WebhookDeliveryRecord[]> {
  return (await api.request<{ deliveries: WebhookDeliveryRecord[] }>(`/webhooks/${id}/deliveries?limit=50`)).deliveries;
}

export function retryWebhookDelivery(api: ApiClient, id: number, deliveryId: number): Promise<void> {
  return api.request(`/webhooks/${id}/deliveries/${deliveryId}/retry`, { method: 'POST' });
}

export async function listWorkflows(api: ApiClient): Promise<WorkflowRecord[]> {
  return (await api.request<{ workflows: WorkflowRecord[] }>('/workflows')).workflows;
}

export function saveWorkflow(api: ApiClient, id: number | null, workflow: WorkflowFields): Promise<WorkflowRecord> {
  return id === null ? api.request('/workflows', { method: 'POST', body: workflow }) : api.request(`/workflows/${id}`, { method: 'PATCH', body: workflow });
}

export function deleteWorkflow(api: ApiClient, id: number): Promise<void> {
  return api.request(`/workflows/${id}`, { method: 'DELETE' });
}

/** How many of the oldest pending reviews the console looks through for workflows that cannot complete. */
export const STUCK_SCAN = 100;

/** Among the oldest pending reviews, those whose workflow can no longer be approved. */
export async function stuckReviews(api: ApiClient): Promise<ReviewRecord[]> {
  const page = await api.request<ReviewPage>(`/reviews?status=pending&sort=oldest&page_size=${STUCK_SCAN}`);
  return page.reviews.filter((review) => review.workflow?.stuck);
}

/** What `POST /routing-rules/trial` says of a sample review: the rule it would meet, and every rule's conditions on it. */
export interface RoutingTrial {
  matched_rule: Pick<RoutingRuleRecord, 'id' | 'name' | 'assign_to_user_id' | 'assign_to_team_id'> | null;
  rules: Array<Pick<RoutingRuleRecord, 'id' | 'name' | 'priority' | 'is_active'> & { matched: boolean; conditions: ConditionResult[] }>;
}

/** The order the API tries rules in: the higher priority first, ties by the older rule. */
export function inTrialOrder(rules: readonly RoutingRuleRecord[]): RoutingRuleRecord[] {
  return [...rules].sort((a, b) => b.priority - a.priority || a.id - b.id);
}

export async function listRoutingRules(api: ApiClient): Promise<RoutingRuleRecord[]> {
  return (await api.request<{ routing_rules: RoutingRuleRecord[] }>('/routing-rules')).routing_rules;
}

export function createRoutingRule(api: ApiClient, rule: RoutingRuleFields): Promise<RoutingRuleRecord> {
  return api.request('/routing-rules', { method: 'POST', body: rule });
}

export function updateRoutingRule(api: ApiClient, id: number, changes: Partial<RoutingRuleFields>): Promise<RoutingRuleRecord> {
  return api.request(`/routing-rules/${id}`, { method: 'PATCH', body: changes });
}

export function deleteRoutingRule(api: ApiClient, id: number): Promise<void> {
  return api.request(`/routing-rules/${id}`, { method: 'DELETE' });
}

export function tryRoutingRules(api: ApiClient, sample: Record<string, unknown>): Promise<RoutingTrial> {
  return api.request('/routing-rules/trial', { method: 'POST', body: sample });
}

/** The link that lets a person set a password; the API hands it over once, and it works once. */
export interface Invitation {
  invitation_url: string;
  invitation_expires_at: string;
}

/** A person just added, with their first invitation link. */
export type InvitedUser = UserRecord & Invitation;

export interface AuditPage {
  entries: AuditRecord[];
  next_cursor: number | null;
}


/** The audit log's filters as the admin types them; blanks filter nothing. */
export interface AuditFilterForm {
  action: string;
  actor_type: AuditActor['type'] | '';
  target_type: string;
  target_id: string;
  /** `datetime-local` values ("2026-11-24T09:00"), in the admin's time zone. */
  since: string;
  until: string;
}

export const NO_AUDIT_FILTERS: AuditFilterForm = { action: '', actor_type: '', target_type: '', target_id: '', since: '', until: '' };

export function getOrganization(api: ApiClient, organizationId: number): Promise<OrganizationRecord> {
  return api.request(`/organizations/${organizationId}`);
}

export function updateOrganization(api: ApiClient, organizationId: number, changes: OrganizationChanges): Promise<OrganizationRecord> {
  return api.request(`/organizations/${organizationId}`, { method: 'PATCH', body: changes });
}

export async function listApiKeys(api: ApiClient, organizationId: number): Promise<ApiKeyRecord[]> {
  return (await api.request<{ api_keys: ApiKeyRecord[] }>(`/organizations/${organizationId}/api-keys`)).api_keys;
}

export function createApiKey(api: ApiClient, organizationId: number, input: ApiKeyInput): Promise<CreatedApiKey> {
  return api.request(`/organizations/${organizationId}/api-keys`, { method: 'POST', body: input });
}

export function revokeApiKey(api: ApiClient, keyId: number): Promise<void> {
  return api.request(`/api-keys/${keyId}`, { method: 'DELETE' });
}

export async function listUsers(api: ApiClient): Promise<UserRecord[]> {
  return (await api.request<{ users: UserRecord[] }>('/users')).users;
}

export function inviteUser(api: ApiClient, input: UserInput): Promise<InvitedUser> {
  return api.request('/users', { method: 'POST', body: input });
}

export function updateUser(api: ApiClient, userId: number, changes: UserChanges): Promise<UserRecord> {
  return api.request(`/users/${userId}`, { method: 'PATCH', body: changes });
}

export function deactivateUser(api: ApiClient, userId: number): Promise<void> {
  return api.request(`/users/${userId}`, { method: 'DELETE' });
}

/** A new link for a person who lost theirs or forgot their password; their earlier link stops working. */
export function issueInvitation(api: ApiClient, userId: number): Promise<Invitation> {
  return api.request(`/users/${userId}/invitation`, { method: 'POST' });
}

export async function listTeams(api: ApiClient): Promise<TeamRecord[]> {
  return (await api.request<{ teams: TeamRecord[] }>('/teams')).teams;
}

export function createTeam(api: ApiClient, input: TeamInput): Promise<TeamRecord> {
  return api.request('/teams', { method: 'POST', body: input });
}

export function addTeamMember(api: ApiClient, teamId: number, userId: number): Promise<TeamRecord> {
  return api.request(`/teams/${teamId}/members/${userId}`, { method: 'PUT' });
}

export function removeTeamMember(api: ApiClient, teamId: number, userId: number): Promise<TeamRecord> {
  return api.request(`/teams/${teamId}/members/${userId}`, { method: 'DELETE' });
}

export async function listAgents(api: ApiClient): Promise<AgentRecord[]> {
  return (await api.request<{ agents: AgentRecord[] }>('/agents')).agents;
}

export function registerAgent(api: ApiClient, input: AgentInput): Promise<AgentRecord> {
  return api.request('/agents', { method: 'POST', body: input });
}

export function listAuditLog(api: ApiClient, filters: AuditFilterForm, cursor: number | null): Promise<AuditPage> {
  return api.request(auditLogPath(filters, cursor));
}

export function verifyAuditLog(api: ApiClient): Promise<AuditVerification> {
  return api.request('/audit-logs/verify');
}

/** `datetime-local` gives minutes without seconds; an "until" minute is meant to include all of it. */
const LAST_MILLISECOND_OF_MINUTE = 59_999;

/**
 * The API wants moments with a zone; a `datetime-local` value is in the admin's. A value the
 * browser did not validate is passed on as typed, for the API to say what is wrong with it.
 */
function instant(local: string, endOfMinute: boolean): string {
  const at = Date.parse(local);
  if (Number.isNaN(at)) return local;
  const minuteOnly = /T\d{2}:\d{2}$/.test(local);
  return new Date(at + (endOfMinute && minuteOnly ? LAST_MILLISECOND_OF_MINUTE : 0)).toISOString();
}

/** `GET /audit-logs` with the filters given and the page after `cursor` (older entries). */
export function auditLogPath(filters: AuditFilterForm, cursor: number | null): string {
  const params = new URLSearchParams();
  const set = (name: string, value: string): void => {
    if (value.trim() !== '') params.set(name, value.trim());
  };
  set('action', filters.action);
  set('actor_type', filters.actor_type);
  set('target_type', filters.target_type);
  set('target_id', filters.target_id);
  if (filters.since) params.set('since', instant(filters.since, false));
  if (filters.until) params.set('until', instant(filters.until, true));
  if (cursor !== null) params.set('cursor', String(cursor));
  const query = params.toString();
  return query ? `/audit-logs?${query}` : '/audit-logs';
}

/** Who made a change, in words: the name the log recorded with it, else its kind and id. */
export function describeActor(actor: AuditActor): string {
  if (actor.type === 'system') return 'System';
  if (actor.type === 'operator') return 'Operator';
  const id = actor.id ?? '';
  if (actor.type === 'user') return actor.label ?? `Person #${id.replace(/^user:/, '')}`;
  return actor.label ? `API key “${actor.label}”` : `API key #${id.replace(/^key:/, '')}`;
}

export type JsonObjectParse = { ok: true; value: Record<string, unknown> } | { ok: false; error: string };

/**
 * Settings and metadata are JSON objects the admin edits as text. Empty text is an empty
 * object; anything else that is not an object is refused here, with a reason to show beside
 * the field, rather than sent for the API to refuse.
 */
export function parseJsonObject(text: string): JsonObjectParse {
  if (text.trim() === '') return { ok: true, value: {} };
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    return { ok: false, error: `This is not valid JSON: ${(error as SyntaxError).message}` };
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    return { ok: false, error: 'This must be a JSON object, in braces: { "name": "value" }' };
  }
  return { ok: true, value: value as Record<string, unknown> };
}
