/**
 * The account console's calls of the API (hosted edition): the organization, its API keys,
 * people, teams, agents and audit log. Records and request bodies are the types generated from
 * the API's OpenAPI document, so the console and the API cannot disagree on a field.
 */
import { ApiError, type ApiClient } from './client';
import { enumValues, type Answer, type ReviewPage, type ReviewRecord, type Schemas, type UserRecord } from './types';

export type { UserRecord, UserRole } from './types';

export type OrganizationRecord = Schemas['Organization'];
export type OrganizationSettings = Schemas['OrganizationSettings'];
export type ApiKeyRecord = Schemas['ApiKey'];
export type KeyScope = ApiKeyRecord['scope'];
export type AgentRecord = Schemas['Agent'];
export type TeamRecord = Schemas['Team'];
export type AuditRecord = Schemas['AuditEntry'];
export type AuditActor = AuditRecord['actor'];
export type AuditVerification = Schemas['AuditVerification'];
export type RoutingRuleRecord = Schemas['RoutingRule'];
export type WorkflowRecord = Schemas['Workflow'];
export type WebhookRecord = Schemas['Webhook'];
export type WebhookDeliveryRecord = Schemas['WebhookDelivery'];
export type EvalRecord = Schemas['Eval'];
export type EvalRunRecord = Schemas['EvalRun'];
export type EvalResult = Schemas['EvalResult'];
export type EvalInput = Schemas['EvalCreate'];
export type SlackInstallationRecord = Schemas['SlackInstallation'];

/** A rule as the console's form holds it: every field the API lets it set. */
export type RoutingRuleFields = Pick<RoutingRuleRecord, 'name' | 'priority' | 'conditions' | 'assign_to_user_id' | 'assign_to_team_id' | 'slack_channel_id' | 'is_active'>;
/** A workflow as the console's form holds it. */
export type WorkflowFields = Pick<WorkflowRecord, 'name' | 'conditions' | 'stages' | 'is_active'>;

export type OrganizationChanges = Schemas['OrganizationUpdate'];
export type ApiKeyInput = Schemas['ApiKeyCreate'];
/** A new API key: the record and, this once, the key itself. */
export type CreatedApiKey = Schemas['ApiKeyCreated'];
export type UserInput = Schemas['UserCreate'];
export type UserChanges = Schemas['UserUpdate'];
export type TeamInput = Schemas['TeamCreate'];
export type AgentInput = Schemas['AgentCreate'];
export type WebhookEvent = Schemas['WebhookEvents'][number];

export const CONSOLE_SECTIONS = ['organization', 'api-keys', 'users', 'teams', 'agents', 'routing-rules', 'workflows', 'evals', 'webhooks', 'slack', 'audit-log'] as const;
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
  evals: 'Evals',
  webhooks: 'Webhooks',
  slack: 'Slack',
  'audit-log': 'Audit log',
};

/** The events an endpoint may receive, as the API names them. */
export const WEBHOOK_EVENTS = enumValues<WebhookEvent>({
  'review.created': true,
  'review.decided': true,
  'review.expired': true,
  'review.vote': true,
  'feedback.created': true,
  'attachment.created': true,
  'attachment.deleted': true,
});

export async function listWebhooks(api: ApiClient): Promise<WebhookRecord[]> {
  return (await api.request<Schemas['WebhookList']>('/webhooks')).webhooks;
}

export function createWebhook(api: ApiClient, input: Schemas['WebhookCreate']): Promise<Schemas['WebhookCreated']> {
  return api.request('/webhooks', { method: 'POST', body: input });
}

export function updateWebhook(api: ApiClient, id: number, changes: Schemas['WebhookUpdate']): Promise<WebhookRecord> {
  return api.request(`/webhooks/${id}`, { method: 'PATCH', body: changes });
}

export function deleteWebhook(api: ApiClient, id: number): Promise<void> {
  return api.request(`/webhooks/${id}`, { method: 'DELETE' });
}

export function rotateWebhookSecret(api: ApiClient, id: number): Promise<Answer<'rotateWebhookSecret', 201>> {
  return api.request(`/webhooks/${id}/rotate-secret`, { method: 'POST' });
}

export function testWebhook(api: ApiClient, id: number): Promise<Answer<'testWebhook', 202>> {
  return api.request(`/webhooks/${id}/test`, { method: 'POST' });
}

export async function listWebhookDeliveries(api: ApiClient, id: number): Promise<WebhookDeliveryRecord[]> {
  return (await api.request<Schemas['WebhookDeliveryPage']>(`/webhooks/${id}/deliveries?limit=50`)).deliveries;
}

export function retryWebhookDelivery(api: ApiClient, id: number, deliveryId: number): Promise<void> {
  return api.request(`/webhooks/${id}/deliveries/${deliveryId}/retry`, { method: 'POST' });
}

export async function listEvals(api: ApiClient): Promise<EvalRecord[]> {
  return (await api.request<Schemas['EvalList']>('/evals')).evals;
}

export function createEval(api: ApiClient, input: EvalInput): Promise<EvalRecord> {
  return api.request('/evals', { method: 'POST', body: input });
}

export function deleteEval(api: ApiClient, id: number): Promise<void> {
  return api.request(`/evals/${id}`, { method: 'DELETE' });
}

/** Runs a suite now: the finished run, or (past the API's wait) the run still going. */
export function runEval(api: ApiClient, id: number): Promise<EvalRunRecord> {
  return api.request(`/evals/${id}/runs`, { method: 'POST' });
}

export async function listEvalRuns(api: ApiClient, id: number): Promise<EvalRunRecord[]> {
  return (await api.request<Schemas['EvalRunList']>(`/evals/${id}/runs?limit=20`)).runs;
}

export async function listWorkflows(api: ApiClient): Promise<WorkflowRecord[]> {
  return (await api.request<Schemas['WorkflowList']>('/workflows')).workflows;
}

export function createWorkflow(api: ApiClient, workflow: Schemas['WorkflowCreate']): Promise<WorkflowRecord> {
  return api.request('/workflows', { method: 'POST', body: workflow });
}

export function updateWorkflow(api: ApiClient, id: number, changes: Schemas['WorkflowUpdate']): Promise<WorkflowRecord> {
  return api.request(`/workflows/${id}`, { method: 'PATCH', body: changes });
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
export type RoutingTrial = Schemas['RoutingTrial'];

/** The order the API tries rules in: the higher priority first, ties by the older rule. */
export function inTrialOrder(rules: readonly RoutingRuleRecord[]): RoutingRuleRecord[] {
  return [...rules].sort((a, b) => b.priority - a.priority || a.id - b.id);
}

export async function listRoutingRules(api: ApiClient): Promise<RoutingRuleRecord[]> {
  return (await api.request<Schemas['RoutingRuleList']>('/routing-rules')).routing_rules;
}

export function createRoutingRule(api: ApiClient, rule: Schemas['RoutingRuleCreate']): Promise<RoutingRuleRecord> {
  return api.request('/routing-rules', { method: 'POST', body: rule });
}

export function updateRoutingRule(api: ApiClient, id: number, changes: Schemas['RoutingRuleUpdate']): Promise<RoutingRuleRecord> {
  return api.request(`/routing-rules/${id}`, { method: 'PATCH', body: changes });
}

export function deleteRoutingRule(api: ApiClient, id: number): Promise<void> {
  return api.request(`/routing-rules/${id}`, { method: 'DELETE' });
}

export function tryRoutingRules(api: ApiClient, sample: Record<string, unknown>): Promise<RoutingTrial> {
  return api.request('/routing-rules/trial', { method: 'POST', body: sample });
}

/** The link that lets a person set a password; the API hands it over once, and it works once. */
export type Invitation = Schemas['Invitation'];

/** A person just added, with their first invitation link. */
export type InvitedUser = Schemas['InvitedUser'];

export type AuditPage = Schemas['AuditPage'];
export type AuditTarget = Schemas['AuditTarget'];

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

/** The keys a type names, without its free-form rest (`[key: string]: unknown`). */
type NamedKeys<T> = keyof { [K in keyof T as string extends K ? never : K]: T[K] };

/** The settings the document names that are true or false: the organization page's toggles. */
export type SettingToggle = { [K in NamedKeys<OrganizationSettings>]: NonNullable<OrganizationSettings[K]> extends boolean ? K : never }[NamedKeys<OrganizationSettings>];

/** Each toggle's words. Keyed by the document's settings, so the compiler holds the list to it. */
export const SETTING_TOGGLES: Record<SettingToggle, { label: string; hint: string }> = {
  require_two_approvals: {
    label: 'Require two approvals',
    hint: 'A review that no workflow governs needs the approvals of two different people (reviewers or admins) before it is approved; a workflow, where one governs, decides instead.',
  },
};

function isToggle(key: string): key is SettingToggle {
  return Object.hasOwn(SETTING_TOGGLES, key);
}

/** An organization's settings as its page shows them: a toggle for each known one, the others as they are. */
export function settingsForm(settings: OrganizationSettings): { toggles: Record<SettingToggle, boolean>; others: Record<string, unknown> } {
  const toggles = Object.fromEntries(Object.keys(SETTING_TOGGLES).map((key) => [key, settings[key] === true])) as Record<SettingToggle, boolean>;
  const others = Object.fromEntries(Object.entries(settings).filter(([key]) => !isToggle(key)));
  return { toggles, others };
}

/**
 * The settings to save, which replace the stored ones as a whole: the others as they are, and
 * each toggle that is on or was set before (one never set and left off is not written).
 */
export function settingsToSave(toggles: Record<SettingToggle, boolean>, others: Record<string, unknown>, before: OrganizationSettings): OrganizationSettings | string {
  const known = Object.keys(others).find(isToggle);
  if (known) return `${known} is set by its toggle above; take it out of the other settings.`;
  const set = (Object.entries(toggles) as Array<[SettingToggle, boolean]>).filter(([key, on]) => on || Object.hasOwn(before, key));
  return { ...others, ...Object.fromEntries(set) };
}

export function getOrganization(api: ApiClient, organizationId: number): Promise<OrganizationRecord> {
  return api.request(`/organizations/${organizationId}`);
}

export function updateOrganization(api: ApiClient, organizationId: number, changes: OrganizationChanges): Promise<OrganizationRecord> {
  return api.request(`/organizations/${organizationId}`, { method: 'PATCH', body: changes });
}

export async function listApiKeys(api: ApiClient, organizationId: number): Promise<ApiKeyRecord[]> {
  return (await api.request<Schemas['ApiKeyList']>(`/organizations/${organizationId}/api-keys`)).api_keys;
}

export function createApiKey(api: ApiClient, organizationId: number, input: ApiKeyInput): Promise<CreatedApiKey> {
  return api.request(`/organizations/${organizationId}/api-keys`, { method: 'POST', body: input });
}

export function revokeApiKey(api: ApiClient, keyId: number): Promise<void> {
  return api.request(`/api-keys/${keyId}`, { method: 'DELETE' });
}

export async function listUsers(api: ApiClient): Promise<UserRecord[]> {
  return (await api.request<Schemas['UserList']>('/users')).users;
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
  return (await api.request<Schemas['TeamList']>('/teams')).teams;
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
  return (await api.request<Schemas['AgentList']>('/agents')).agents;
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

/** The organization's Slack workspace, or null when Slack is not installed. */
export async function getSlackInstallation(api: ApiClient): Promise<SlackInstallationRecord | null> {
  try {
    return await api.request<SlackInstallationRecord>('/integrations/slack');
  } catch (error) {
    if (error instanceof ApiError && error.status === 404) return null;
    throw error;
  }
}

/** Where to send the admin to authorize the app ("Add to Slack"). */
export async function startSlackInstall(api: ApiClient): Promise<string> {
  return (await api.request<Answer<'startSlackInstall', 200>>('/integrations/slack/oauth', { method: 'POST' })).authorize_url;
}

export function setSlackChannel(api: ApiClient, channelId: string | null): Promise<SlackInstallationRecord> {
  return api.request('/integrations/slack', { method: 'PATCH', body: { channel_id: channelId } });
}

export function uninstallSlack(api: ApiClient): Promise<void> {
  return api.request('/integrations/slack', { method: 'DELETE' });
}
