/**
 * Who may call each operation of the hosted edition, by operationId: `admin` is an admin API key
 * of an organization or a person signed in with the admin role, `agent` an agent API key,
 * `reviewer` and `viewer` people signed in with those roles, `operator` the operator key. The one table both
 * enforces the rules (`hostedAccess`) and is written into the OpenAPI document as
 * `x-callers`, so the two cannot drift apart. Operations open without a key (`security: []`)
 * are not listed. An operation missing here is refused to every key, and the document build
 * fails on it.
 */
export const CALLERS = ['operator', 'admin', 'agent', 'reviewer', 'viewer'] as const;
export type Caller = (typeof CALLERS)[number];

/** What files reviews and their evidence: agents, and admins on their behalf. */
const FILERS: readonly Caller[] = ['admin', 'agent'];
/** Everyone of the organization reads its reviews. */
const READERS: readonly Caller[] = ['admin', 'agent', 'reviewer', 'viewer'];
/** A decision is a person's: an agent key reads decisions but never makes one, nor does a viewer. */
const DECIDERS: readonly Caller[] = ['admin', 'reviewer'];
const ADMIN: readonly Caller[] = ['admin'];

export const HOSTED_CALLERS: Readonly<Record<string, readonly Caller[]>> = {
  createReview: FILERS,
  listReviews: READERS,
  getReview: READERS,
  decideReview: DECIDERS,
  getDecision: READERS,
  // How a decision turned out is told by the agent that acted on it, or by a reviewer.
  addFeedback: ['admin', 'agent', 'reviewer'],
  listFeedback: READERS,
  uploadAttachment: FILERS,
  listAttachments: READERS,
  getAttachment: READERS,
  downloadAttachment: READERS,
  deleteAttachment: FILERS,
  getStatistics: READERS,
  verifyReceipt: READERS,
  streamEvents: READERS,
  createOrganization: ['operator'],
  getOrganization: ADMIN,
  updateOrganization: ADMIN,
  createApiKey: ADMIN,
  listApiKeys: ADMIN,
  revokeApiKey: ADMIN,
  createAgent: ADMIN,
  listAgents: READERS,
  getAgent: READERS,
  createUser: ADMIN,
  listUsers: ADMIN,
  getUser: ADMIN,
  updateUser: ADMIN,
  deactivateUser: ADMIN,
  reinviteUser: ADMIN,
  createTeam: ADMIN,
  listTeams: ADMIN,
  getTeam: ADMIN,
  addTeamMember: ADMIN,
  removeTeamMember: ADMIN,
  createRoutingRule: ADMIN,
  listRoutingRules: ADMIN,
  getRoutingRule: ADMIN,
  updateRoutingRule: ADMIN,
  deleteRoutingRule: ADMIN,
  tryRoutingRules: ADMIN,
  createWorkflow: ADMIN,
  listWorkflows: ADMIN,
  getWorkflow: ADMIN,
  updateWorkflow: ADMIN,
  deleteWorkflow: ADMIN,
  createWebhook: ADMIN,
  listWebhooks: ADMIN,
  getWebhook: ADMIN,
  updateWebhook: ADMIN,
  deleteWebhook: ADMIN,
  rotateWebhookSecret: ADMIN,
  testWebhook: ADMIN,
  listWebhookDeliveries: ADMIN,
  retryWebhookDelivery: ADMIN,
  createEval: ADMIN,
  listEvals: ADMIN,
  getEval: ADMIN,
  updateEval: ADMIN,
  deleteEval: ADMIN,
  runEval: ADMIN,
  listEvalRuns: ADMIN,
  getEvalRun: ADMIN,
  startSlackInstall: ADMIN,
  getSlackInstallation: ADMIN,
  updateSlackInstallation: ADMIN,
  deleteSlackInstallation: ADMIN,
  listAuditLog: ADMIN,
  verifyAuditLog: ADMIN,
};
