import { invalidInput, notFound, refuseNul, unworkable } from '../shared/errors';
import type { Clock, Tx, UnitOfWork } from '../shared/unit-of-work';
import type { OrganizationRepository } from '../organizations/ports';
import type { PeopleRepository } from '../people/ports';
import type { Principal } from '../shared/principal';
import type { WorkflowFields, WorkflowRecord } from './records';
import type { WorkflowRepository } from './ports';
import type { ReviewRecord, WorkflowProgress } from '../reviews/records';
import { DECIDING_ROLES } from '../people/records';
import { requireDecider } from '../people/deciders';
import { compileRules, type RoutableReview, RuleError } from '../routing/conditions';
import { organizationOf, organizationOfCaller } from '../shared/scope';
import { PerOrganization } from '../shared/per-organization';
import { approvalsIn, isEligible, progressOf, startWorkflow, TWO_APPROVALS, type Voter, type WorkflowStage, type WorkflowState } from './voting';

export interface WorkflowInput {
  name: string;
  conditions?: Record<string, unknown>;
  stages: WorkflowStage[];
  is_active?: boolean;
  organization_id?: number | null;
}

export type WorkflowChanges = Partial<Omit<WorkflowInput, 'organization_id'>>;

/** The compiled conditions of a workflow: the routing rules' engine, with a stand-in action. */
function conditionsTest(name: string, conditions: Record<string, unknown>): (review: RoutableReview) => boolean {
  const [rule] = compileRules([{ name, priority: 0, conditions, assign_to: 'workflow' }]);
  return (review) => rule.matches(review);
}

type Definition = Pick<WorkflowState, 'workflow_id' | 'name' | 'stages'>;

/** What a create needs of an organization's workflows: kept between creates (see `PerOrganization`). */
interface Governance {
  /** Its active workflows, oldest first, each with its compiled conditions. */
  workflows: Array<{ definition: Definition; matches: (review: RoutableReview) => boolean }>;
  /** Its `require_two_approvals` setting: what governs a review no workflow matches. */
  twoApprovals: boolean;
  /** Its active people who may vote. */
  voters: Voter[];
}

/** The workflow that governs a new review, and who may vote on it, as read before the review is stored. */
export interface Governing {
  organizationId: number;
  definition: Definition;
  voters: Voter[];
}

/**
 * Approval workflows (hosted edition): their definitions, which one governs a new review, and
 * how a review's votes read. Counting a vote is the review service's, in its transaction.
 */
export class Workflows {
  /** Each organization's governance as creates read it, loaded once (see `PerOrganization`). */
  readonly kept: PerOrganization<Governance>;

  constructor(
    private readonly workflows: WorkflowRepository,
    private readonly organizations: Pick<OrganizationRepository, 'findOrganization'>,
    private readonly people: PeopleRepository,
    private readonly unitOfWork: UnitOfWork,
    private readonly clock: Clock,
  ) {
    this.kept = new PerOrganization((organizationId) => this.governance(organizationId));
  }

  async create(principal: Principal, input: WorkflowInput): Promise<WorkflowRecord> {
    refuseNul(input);
    const organizationId = organizationOf(principal.scope, input.organization_id) ?? organizationOfCaller(principal);
    const fields: WorkflowFields = { name: input.name.trim(), conditions: input.conditions ?? {}, stages: input.stages, is_active: input.is_active ?? true };
    return this.unitOfWork.run(async (tx) => {
      await this.check(tx, organizationId, fields, true);
      const created = await this.workflows.insert(tx, organizationId, fields, this.clock());
      tx.organizationChanged(organizationId);
      tx.audit({ organization_id: organizationId, action: 'workflow.created', target_type: 'workflow', target_id: created.id, data: { name: created.name } });
      return created;
    }, { by: principal });
  }

  async list(principal: Principal): Promise<{ workflows: WorkflowRecord[]; count: number }> {
    const workflows = await this.workflows.list(organizationOfCaller(principal));
    return { workflows, count: workflows.length };
  }

  async get(principal: Principal, id: number): Promise<WorkflowRecord> {
    const workflow = await this.workflows.find(organizationOfCaller(principal), id);
    if (!workflow) throw notFound('workflow', id);
    return workflow;
  }

  /** Changes the definition: reviews it already governs keep the stages they started with. */
  async update(principal: Principal, id: number, changes: WorkflowChanges): Promise<WorkflowRecord> {
    refuseNul(changes);
    const organizationId = organizationOfCaller(principal);
    return this.unitOfWork.run(async (tx) => {
      const current = await this.workflows.find(organizationId, id, tx);
      if (!current) throw notFound('workflow', id);
      const fields: WorkflowFields = {
        name: changes.name?.trim() ?? current.name,
        conditions: changes.conditions ?? current.conditions,
        stages: changes.stages ?? current.stages,
        is_active: changes.is_active ?? current.is_active,
      };
      await this.check(tx, organizationId, fields, changes.stages !== undefined);
      const updated = (await this.workflows.update(tx, organizationId, id, fields, this.clock())) as WorkflowRecord;
      tx.organizationChanged(organizationId);
      tx.audit({ organization_id: organizationId, action: 'workflow.updated', target_type: 'workflow', target_id: id, data: { changed: Object.keys(changes) } });
      return updated;
    }, { by: principal });
  }

  async delete(principal: Principal, id: number): Promise<void> {
    const organizationId = organizationOfCaller(principal);
    await this.unitOfWork.run(async (tx) => {
      if (!(await this.workflows.delete(tx, organizationId, id))) throw notFound('workflow', id);
      tx.organizationChanged(organizationId);
      tx.audit({ organization_id: organizationId, action: 'workflow.deleted', target_type: 'workflow', target_id: id, data: {} });
    }, { by: principal });
  }

  /**
   * The workflow that governs a new review: the organization's first active workflow (oldest
   * first) whose conditions hold, else its `require_two_approvals` setting; none, else. Read
   * before the review's transaction, which then only writes (`start`).
   */
  async governing(organizationId: number, review: RoutableReview): Promise<Governing | null> {
    const { workflows, twoApprovals, voters } = await this.kept.get(organizationId);
    const definition = workflows.find((workflow) => workflow.matches(review))?.definition ?? (twoApprovals ? TWO_APPROVALS : null);
    return definition && { organizationId, definition, voters };
  }

  /** Starts the workflow that governs a new review, in the transaction that stores it. */
  async start(tx: Tx, reviewId: number, { organizationId, definition, voters }: Governing): Promise<WorkflowProgress> {
    const state = startWorkflow(definition);
    await this.workflows.saveState(tx, reviewId, organizationId, state, this.clock(), true);
    return progressOf(state, voters);
  }

  private async governance(organizationId: number): Promise<Governance> {
    const [stored, organization, voters] = await Promise.all([
      this.workflows.list(organizationId),
      this.organizations.findOrganization(organizationId),
      this.workflows.voters(organizationId),
    ]);
    const workflows = stored
      .filter((workflow) => workflow.is_active)
      .map((workflow) => ({ definition: { workflow_id: workflow.id, name: workflow.name, stages: workflow.stages }, matches: conditionsTest(workflow.name, workflow.conditions) }));
    return { workflows, twoApprovals: organization?.settings.require_two_approvals === true, voters };
  }

  /** The reviews with their workflows' progress, for those of an organization that one governs. */
  async withProgress(organizationId: number | null, reviews: ReviewRecord[]): Promise<ReviewRecord[]> {
    if (organizationId === null || reviews.length === 0) return reviews;
    const states = await this.workflows.statesOf(reviews.map((review) => review.id));
    if (states.size === 0) return reviews;
    const voters = await this.workflows.voters(organizationId);
    return reviews.map((review) => {
      const state = states.get(review.id);
      return state ? { ...review, workflow: progressOf(state, voters) } : review;
    });
  }

  /** Where a review's workflow stood, in words, for the note of a decision made around it (expiry); null without one. */
  async summary(reviewId: number): Promise<string | null> {
    const state = (await this.workflows.statesOf([reviewId])).get(reviewId);
    if (!state) return null;
    const stage = state.stages[Math.min(state.stage, state.stages.length - 1)];
    return `its approval workflow '${state.name}' was at stage ${state.stage + 1} of ${state.stages.length} (${stage.name}) with ${approvalsIn(state)} of ${stage.required_approvals} approvals`;
  }

  /** A review's workflow state, held for the transaction; null when none governs it (or it is another organization's). */
  lock(tx: Tx, organizationId: number, reviewId: number): Promise<WorkflowState | null> {
    return this.workflows.lockState(tx, organizationId, reviewId);
  }

  save(tx: Tx, organizationId: number, reviewId: number, state: WorkflowState): Promise<void> {
    return this.workflows.saveState(tx, reviewId, organizationId, state, this.clock(), false);
  }

  /** The organization's active people who may vote, and the progress of `state` among them. */
  async votersAndProgress(tx: Tx, organizationId: number, state: WorkflowState): Promise<{ voters: Voter[]; progress: WorkflowProgress }> {
    const voters = await this.workflows.voters(organizationId, tx);
    return { voters, progress: progressOf(state, voters) };
  }

  /** Conditions the engine accepts, and, where the stages are set, stages that can complete. */
  private async check(tx: Tx, organizationId: number, fields: WorkflowFields, stagesSet: boolean): Promise<void> {
    try {
      conditionsTest(fields.name, fields.conditions);
    } catch (error) {
      if (error instanceof RuleError) throw invalidInput('conditions', error.message.replace(/^rule '[^']*', /, ''));
      throw error;
    }
    if (stagesSet) await this.checkStages(tx, organizationId, fields.stages);
  }

  /**
   * Each stage's approvers are people and a team of the organization (404 otherwise), the
   * people named able to decide (a viewer or a deactivated person: 422), and the stage asks for
   * no more approvals than it has people to give them (422). Checked where stages are set only:
   * an approver deactivated since leaves the workflow to be changed in other ways (switched
   * off, renamed), its reviews shown stuck.
   */
  private async checkStages(tx: Tx, organizationId: number, stages: readonly WorkflowStage[]): Promise<void> {
    const voters = await this.workflows.voters(organizationId, tx);
    for (const [index, stage] of stages.entries()) {
      const where = `stages[${index}]`;
      const { user_ids: userIds = [], team_id: teamId, roles = [] } = stage.approvers;
      if (userIds.length === 0 && teamId === undefined && roles.length === 0) throw invalidInput(`${where}.approvers`, 'name at least one of user_ids, team_id or roles');
      if (roles.some((role) => !(DECIDING_ROLES as readonly string[]).includes(role))) {
        throw invalidInput(`${where}.approvers.roles`, `must be among ${DECIDING_ROLES.join(', ')}: a viewer reads reviews but cannot decide them`);
      }
      for (const userId of userIds) {
        const user = await this.people.findUser(organizationId, userId, tx);
        if (!user) throw notFound('user', userId);
        requireDecider(user, `${where}.approvers.user_ids`, 'name active reviewers or admins');
      }
      if (teamId !== undefined && !(await this.people.findTeam(organizationId, teamId, tx))) throw notFound('team', teamId);
      const eligible = voters.filter((voter) => isEligible(stage, voter)).length;
      if (stage.required_approvals > eligible) {
        throw unworkable(
          `${where}.required_approvals`,
          `stage ${index + 1} (${stage.name}) asks for ${stage.required_approvals} approvals, but only ${eligible} active ${eligible === 1 ? 'reviewer or admin is' : 'reviewers and admins are'} among its approvers`,
        );
      }
    }
  }
}
