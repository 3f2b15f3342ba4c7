import { notFound, refuseNul } from '../shared/errors';
import type { AgentRecord } from './records';
import type { AgentRepository } from './ports';
import type { Clock, UnitOfWork } from '../shared/unit-of-work';
import type { Principal } from '../shared/principal';
import { organizationOf, organizationOfCaller } from '../shared/scope';

export interface AgentInput {
  name: string;
  framework?: string | null;
  description?: string | null;
  organization_id?: number | null;
  metadata?: Record<string, unknown>;
}

/** The agents an organization registers: a review's `agent_id` names one of them. */
export class AgentService {
  constructor(
    private readonly agents: AgentRepository,
    private readonly unitOfWork: UnitOfWork,
    private readonly clock: Clock,
  ) {}

  async create(principal: Principal, input: AgentInput): Promise<AgentRecord> {
    refuseNul(input);
    const organizationId = organizationOf(principal.scope, input.organization_id) ?? organizationOfCaller(principal);
    const agent = {
      organization_id: organizationId,
      name: input.name,
      framework: input.framework ?? null,
      description: input.description ?? null,
      metadata: input.metadata ?? {},
      created_at: this.clock(),
    };
    return this.unitOfWork.run(async (tx) => {
      const created = await this.agents.insert(tx, agent);
      tx.audit({ organization_id: organizationId, action: 'agent.created', target_type: 'agent', target_id: created.id, data: { name: created.name, framework: created.framework } });
      return created;
    }, { by: principal });
  }

  async list(principal: Principal): Promise<{ agents: AgentRecord[]; count: number }> {
    const agents = await this.agents.list(organizationOfCaller(principal));
    return { agents, count: agents.length };
  }

  async get(principal: Principal, id: number): Promise<AgentRecord> {
    const agent = await this.agents.find(organizationOfCaller(principal), id);
    if (!agent) throw notFound('agent', id);
    return agent;
  }
}
