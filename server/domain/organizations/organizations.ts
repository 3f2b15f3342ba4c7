import { hash, randomBytes } from 'node:crypto';
import { AppError, invalidInput, notFound, refuseNul } from '../shared/errors';
import type { AgentRepository, NewApiKey, OrganizationRepository } from './ports';
import type { ApiKeyRecord, OrganizationRecord, OrganizationSettings } from './records';
import type { AuditEntryInput, Clock, UnitOfWork } from '../shared/unit-of-work';
import type { KeyScope, Principal, Scope } from '../shared/principal';
import { isOrganizationAdmin, organizationOfCaller } from '../shared/scope';
import { KeptLoads } from '../shared/kept-loads';

/** Recognisable, so that secret scanners find a leaked key. */
export const API_KEY_PREFIX = 'gl_';
/** Characters of a key shown in lists: the prefix and a few more. */
const SHOWN_CHARACTERS = API_KEY_PREFIX.length + 6;
/** A use of a key is written down at most this often: not a write on every request. */
const LAST_USED_RESOLUTION_MS = 60_000;
/** Keys a process keeps at most; each is a few hundred bytes. */
const KEPT_KEYS = 10_000;

export function keyHash(key: string): string {
  // One-shot: every request with an organization's key hashes it.
  return hash('sha256', key, 'hex');
}

const KEY_PRINCIPAL_PREFIX = 'key:';

/** The `Principal.id` of an organization's API key. */
function keyPrincipalId(keyId: number): string {
  return `${KEY_PRINCIPAL_PREFIX}${keyId}`;
}

/** A valid key as this process keeps it, with when it last wrote down the key's use. */
interface KnownKey {
  record: ApiKeyRecord;
  useWrittenAt: number | null;
}

export interface OrganizationInput {
  name: string;
  settings?: OrganizationSettings;
}

export interface ApiKeyInput {
  name: string;
  scope: KeyScope;
  /** For an `agent` key: the registered agent it belongs to, whose id then fills every review it files. */
  agent_id?: number | null;
}

/** An API key as created: the record and, this once, the key itself. */
export type CreatedApiKey = ApiKeyRecord & { key: string };

interface OrganizationServiceOptions {
  organizations: OrganizationRepository;
  agents: AgentRepository;
  unitOfWork: UnitOfWork;
  clock: Clock;
}

/** The hosted edition's tenants and their API keys. */
export class OrganizationService {
  /**
   * Valid keys by their hash, read once and kept until a key is revoked here or, through the
   * relay, in another process (or while this process may not hear of revocations: see
   * `keepKeysWhile`). Unknown and revoked keys are never kept: they are read on every request.
   */
  private readonly knownKeys: KeptLoads<string, KnownKey | null>;

  constructor(private readonly options: OrganizationServiceOptions) {
    this.knownKeys = new KeptLoads(
      async (hash) => {
        const record = await options.organizations.findKeyByHash(hash);
        return record && record.revoked_at === null ? { record, useWrittenAt: record.last_used_at === null ? null : Date.parse(record.last_used_at) } : null;
      },
      { keeps: (known) => known !== null, limit: KEPT_KEYS },
    );
  }

  /** A new organization with its first admin key. Only the operator creates organizations. */
  async create(principal: Principal, input: OrganizationInput): Promise<{ organization: OrganizationRecord; api_key: CreatedApiKey }> {
    if (principal.kind !== 'operator') throw new AppError(403, 'only the operator key creates organizations');
    refuseNul(input);
    const now = this.options.clock();
    return this.options.unitOfWork.run(async (tx) => {
      const organization = await this.options.organizations.insertOrganization(tx, input.name, input.settings ?? {}, now);
      tx.audit({ organization_id: organization.id, action: 'organization.created', target_type: 'organization', target_id: organization.id, data: { name: organization.name } });
      const { key, stored } = newKey(organization.id, { name: 'First admin key', scope: 'admin' }, now);
      const apiKey = await this.options.organizations.insertKey(tx, stored);
      tx.audit(keyCreated(apiKey));
      return { organization, api_key: { ...apiKey, key } };
    }, { by: principal });
  }

  async get(principal: Principal, organizationId: number): Promise<OrganizationRecord> {
    this.requireAdminOf(principal, organizationId);
    const organization = await this.options.organizations.findOrganization(organizationId);
    if (!organization) throw notFound('organization', organizationId);
    return organization;
  }

  async update(principal: Principal, organizationId: number, changes: Partial<OrganizationInput>): Promise<OrganizationRecord> {
    this.requireAdminOf(principal, organizationId);
    refuseNul(changes);
    const now = this.options.clock();
    const updated = await this.options.unitOfWork.run(async (tx) => {
      const organization = await this.options.organizations.updateOrganization(tx, organizationId, changes, now);
      if (organization) {
        // Its settings say whether a review no workflow governs needs two approvals.
        tx.organizationChanged(organizationId);
        tx.audit({ organization_id: organizationId, action: 'organization.updated', target_type: 'organization', target_id: organizationId, data: { changed: Object.keys(changes).sort() } });
      }
      return organization;
    }, { by: principal });
    if (!updated) throw notFound('organization', organizationId);
    return updated;
  }

  async createKey(principal: Principal, organizationId: number, input: ApiKeyInput): Promise<CreatedApiKey> {
    this.requireAdminOf(principal, organizationId);
    refuseNul(input);
    const agentId = input.agent_id ?? null;
    if (agentId !== null && input.scope !== 'agent') throw invalidInput('agent_id', 'belongs on an agent key (scope agent) only');
    const { key, stored } = newKey(organizationId, input, this.options.clock());
    const created = await this.options.unitOfWork.run(async (tx) => {
      if (agentId !== null && !(await this.options.agents.find(organizationId, agentId, tx))) throw notFound('agent', agentId);
      const apiKey = await this.options.organizations.insertKey(tx, stored);
      tx.audit(keyCreated(apiKey));
      return apiKey;
    }, { by: principal });
    return { ...created, key };
  }

  async listKeys(principal: Principal, organizationId: number): Promise<{ api_keys: ApiKeyRecord[]; count: number }> {
    this.requireAdminOf(principal, organizationId);
    const keys = await this.options.organizations.listKeys(organizationId);
    return { api_keys: keys, count: keys.length };
  }

  /**
   * Revokes a key of the caller's organization, and ends what it holds open (live streams, MCP
   * sessions) in every process; revoking a revoked key changes nothing.
   */
  async revokeKey(principal: Principal, keyId: number): Promise<void> {
    const organizationId = this.requireAdmin(principal);
    const now = this.options.clock();
    const outcome = await this.options.unitOfWork.run(async (tx) => {
      const result = await this.options.organizations.revokeKey(tx, organizationId, keyId, now);
      if (result === 'revoked') {
        tx.audit({ organization_id: organizationId, action: 'api_key.revoked', target_type: 'api_key', target_id: keyId, data: {} });
        tx.revoke(keyPrincipalId(keyId));
      }
      return result;
    }, { by: principal });
    if (outcome === 'not_found') throw notFound('API key', keyId);
  }

  /**
   * The caller an organization's key stands for, or null for a key that is unknown or revoked.
   * A valid key is read once and kept: its revocation is published to this process before
   * `revokeKey` returns, and to other processes through the relay a notification later.
   */
  async authenticate(presented: string): Promise<Principal | null> {
    if (!presented.startsWith(API_KEY_PREFIX)) return null;
    const known = await this.knownKeys.get(keyHash(presented));
    if (!known) return null;
    const { record } = known;
    const now = this.options.clock();
    if (known.useWrittenAt === null || now - known.useWrittenAt >= LAST_USED_RESOLUTION_MS) {
      known.useWrittenAt = now;
      await this.options.organizations.touchKey(record.id, now);
    }
    const scope: Scope = record.agent_id === null ? { organizationId: record.organization_id } : { organizationId: record.organization_id, agentId: record.agent_id };
    return { kind: 'api_key', scope, id: keyPrincipalId(record.id), access: record.scope, label: record.name };
  }

  /**
   * A principal was revoked (as the feed publishes it): once it is a key, this process forgets
   * every key it keeps. Revocations are rare, and forgetting all costs each key one read.
   */
  forgetKeysOnRevocation(principalId: string): void {
    if (principalId.startsWith(KEY_PRINCIPAL_PREFIX)) this.knownKeys.forgetAll();
  }

  /** Keys are kept only while this process hears of every revocation (see `EventFeed.hearing`). */
  keepKeysWhile(hearsEverything: boolean): void {
    this.knownKeys.forgetAll(hearsEverything);
  }

  /** The caller's organization, for an admin key; 403 for any other caller. */
  private requireAdmin(principal: Principal): number {
    const organizationId = organizationOfCaller(principal);
    if (!isOrganizationAdmin(principal)) throw new AppError(403, 'this needs an admin of the organization (an admin API key, or a signed-in admin)');
    return organizationId;
  }

  /** Another organization is a 404, as if it did not exist. */
  private requireAdminOf(principal: Principal, organizationId: number): void {
    if (principal.scope.organizationId !== organizationId) throw notFound('organization', organizationId);
    this.requireAdmin(principal);
  }
}

function newKey(organizationId: number, input: ApiKeyInput, now: number): { key: string; stored: NewApiKey } {
  const key = `${API_KEY_PREFIX}${randomBytes(32).toString('base64url')}`;
  return {
    key,
    stored: {
      organization_id: organizationId,
      name: input.name,
      prefix: key.slice(0, SHOWN_CHARACTERS),
      key_hash: keyHash(key),
      scope: input.scope,
      agent_id: input.agent_id ?? null,
      created_at: now,
    },
  };
}

function keyCreated(apiKey: ApiKeyRecord): AuditEntryInput {
  const { name, prefix, scope, agent_id } = apiKey;
  return { organization_id: apiKey.organization_id, action: 'api_key.created', target_type: 'api_key', target_id: apiKey.id, data: { name, prefix, scope, agent_id } };
}
