import type { Database } from './database';
import { organizationRows } from './organization-rows';
import { isoTime } from './time';
import { transactionOf } from './unit-of-work';
import type { AgentRecord } from '../domain/organizations/records';
import type { AgentRepository, NewAgent } from '../domain/organizations/ports';
import type { Tx } from '../domain/shared/unit-of-work';

interface AgentRow {
  id: number;
  organization_id: number;
  name: string;
  framework: string | null;
  description: string | null;
  metadata: string;
  created_at: number;
}

const COLUMNS = 'id, organization_id, name, framework, description, metadata, created_at';

function toAgent(row: AgentRow): AgentRecord {
  return {
    id: Number(row.id),
    organization_id: Number(row.organization_id),
    name: row.name,
    framework: row.framework,
    description: row.description,
    metadata: JSON.parse(row.metadata) as Record<string, unknown>,
    created_at: isoTime(Number(row.created_at)),
  };
}

/** Agents this process keeps found, at most: enough for every agent of a busy installation. */
const KEPT_AGENTS = 10_000;

export class AgentStore implements AgentRepository {
  /**
   * Agents found before, by organization and id: an agent is never changed or deleted, so one
   * found stays true, and an agent's every create need not read it again (a round trip each).
   */
  private readonly found = new Map<string, AgentRecord>();

  constructor(private readonly db: Database) {}

  async insert(tx: Tx, agent: NewAgent): Promise<AgentRecord> {
    const row = { ...agent, metadata: JSON.stringify(agent.metadata) };
    const id = await this.db.insertReturningId(
      'INSERT INTO agents (organization_id, name, framework, description, metadata, created_at) VALUES ($organization_id, $name, $framework, $description, $metadata, $created_at)',
      row,
      transactionOf(tx),
    );
    return toAgent({ id, ...row });
  }

  async list(organizationId: number): Promise<AgentRecord[]> {
    return (await organizationRows<AgentRow>(this.db, 'agents', COLUMNS, organizationId)).map(toAgent);
  }

  async find(organizationId: number, id: number, tx?: Tx): Promise<AgentRecord | null> {
    const key = `${organizationId}:${id}`;
    const kept = this.found.get(key);
    if (kept) return kept;
    const [row] = await organizationRows<AgentRow>(this.db, 'agents', COLUMNS, organizationId, id, tx);
    if (!row) return null;
    if (this.found.size >= KEPT_AGENTS) this.found.clear();
    // Shared by every caller from now on: none may change it.
    const agent = Object.freeze(toAgent(row));
    this.found.set(key, agent);
    return agent;
  }
}
