/**
 * Who may call each operation of the hosted edition, by operationId: `admin` and `agent` are
 * the scopes of an organization's API keys, `operator` the operator key. The one table both
 * enforces the rules (`hostedAccess`) and is written into the OpenAPI document as
 * `x-callers`, so the two cannot drift apart. Operations open without a key (`security: []`)
 * are not listed. An operation missing here is refused to every key, and the document build
 * fails on it.
 */
export const CALLERS = ['operator', 'admin', 'agent'] as const;
export type Caller = (typeof CALLERS)[number];

const ORGANIZATION_KEYS: readonly Caller[] = ['admin', 'agent'];

/** `/mcp`, outside the document (JSON-RPC, not REST): its tools read and file reviews, never decide. */
export const MCP_CALLERS: readonly Caller[] = ORGANIZATION_KEYS;
const ADMIN: readonly Caller[] = ['admin'];

export const HOSTED_CALLERS: Readonly<Record<string, readonly Caller[]>> = {
  createReview: ORGANIZATION_KEYS,
  listReviews: ORGANIZATION_KEYS,
  getReview: ORGANIZATION_KEYS,
  // A decision is a person's: an agent key reads decisions but never makes one.
  decideReview: ADMIN,
  getDecision: ORGANIZATION_KEYS,
  addFeedback: ORGANIZATION_KEYS,
  listFeedback: ORGANIZATION_KEYS,
  uploadAttachment: ORGANIZATION_KEYS,
  listAttachments: ORGANIZATION_KEYS,
  getAttachment: ORGANIZATION_KEYS,
  downloadAttachment: ORGANIZATION_KEYS,
  deleteAttachment: ORGANIZATION_KEYS,
  getStatistics: ORGANIZATION_KEYS,
  streamEvents: ORGANIZATION_KEYS,
  createOrganization: ['operator'],
  getOrganization: ADMIN,
  updateOrganization: ADMIN,
  createApiKey: ADMIN,
  listApiKeys: ADMIN,
  revokeApiKey: ADMIN,
  createAgent: ADMIN,
  listAgents: ORGANIZATION_KEYS,
  getAgent: ORGANIZATION_KEYS,
  createUser: ADMIN,
  listUsers: ADMIN,
  getUser: ADMIN,
  updateUser: ADMIN,
  deactivateUser: ADMIN,
  createTeam: ADMIN,
  listTeams: ADMIN,
  getTeam: ADMIN,
  addTeamMember: ADMIN,
  removeTeamMember: ADMIN,
  listAuditLog: ADMIN,
  verifyAuditLog: ADMIN,
};
