/**
 * The approval workflow of one review, as pure functions: who may vote at which stage, what a
 * vote does, and when the review is decided. No I/O: the caller stores the state and holds the
 * review's row while a vote is counted, so two last votes at once cannot both complete it.
 */
import type { DecisionType, WorkflowProgress, WorkflowVote } from '../reviews/records';
import { type DecidingRole, DECIDING_ROLES, type UserRole } from '../people/records';

export interface WorkflowApprovers {
  user_ids?: number[];
  team_id?: number;
  roles?: DecidingRole[];
}

export interface WorkflowStage {
  name: string;
  approvers: WorkflowApprovers;
  required_approvals: number;
}

export type Vote = WorkflowVote;

export interface WorkflowState {
  /** The workflow's id; null for the organization's built-in "two approvals". */
  workflow_id: number | null;
  name: string;
  /** The stages as they were when the review arrived: a later edit of the workflow does not change a running one. */
  stages: WorkflowStage[];
  /** The stage now voting (0-based); equal to `stages.length` once every stage has approved. */
  stage: number;
  votes: Vote[];
  /** The action as last modified by a vote: later votes approve this one. */
  modified_action: string | null;
}

/** The person casting a vote, as the organization knows them now. */
export interface Voter {
  id: number;
  name: string;
  role: UserRole;
  team_ids: readonly number[];
}

export interface VoteInput {
  decision_type: DecisionType;
  modified_action?: string | null;
  notes?: string | null;
}

export type VoteResult =
  | { kind: 'refused'; status: 403 | 409; reason: string }
  /** Counted; the review still waits for more votes. */
  | { kind: 'counted'; state: WorkflowState }
  /** The vote that decides the review. */
  | { kind: 'decided'; state: WorkflowState; decision: { decision_type: DecisionType; modified_action: string | null; notes: string | null } };

/** The organization setting `require_two_approvals`: two different people of those who may decide. */
export const TWO_APPROVALS: Pick<WorkflowState, 'workflow_id' | 'name' | 'stages'> = {
  workflow_id: null,
  name: 'Two approvals',
  stages: [{ name: 'Two approvals', approvers: { roles: ['admin', 'reviewer'] }, required_approvals: 2 }],
};

export function startWorkflow(definition: Pick<WorkflowState, 'workflow_id' | 'name' | 'stages'>): WorkflowState {
  return { ...definition, stage: 0, votes: [], modified_action: null };
}

/** Whether `voter` approves at `stage`: named, on its team or of one of its roles — and never a viewer, who only reads (a team may have some). */
export function isEligible(stage: WorkflowStage, voter: Voter): boolean {
  if (!(DECIDING_ROLES as readonly UserRole[]).includes(voter.role)) return false;
  const { user_ids: userIds, team_id: teamId, roles } = stage.approvers;
  return Boolean(userIds?.includes(voter.id) || (teamId !== undefined && voter.team_ids.includes(teamId)) || (roles as readonly UserRole[] | undefined)?.includes(voter.role));
}

/** Approvals counted in the stage now voting. */
export function approvalsIn(state: WorkflowState, stage = state.stage): number {
  return state.votes.filter((vote) => vote.stage === stage && vote.decision_type !== 'reject').length;
}

/**
 * Counts `voter`'s vote. A reject by an approver of the stage ends the review rejected; an
 * approve or a modify counts towards the stage (a modify also replaces the action the later
 * votes approve); the stage's last approval moves to the next stage, and the last stage's
 * decides the review: approved, or modified when a vote modified the action.
 */
export function castVote(state: WorkflowState, voter: Voter, input: VoteInput, now: string): VoteResult {
  if (state.stage >= state.stages.length) return { kind: 'refused', status: 409, reason: 'the workflow has already finished' };
  if (state.votes.some((vote) => vote.user_id === voter.id)) return { kind: 'refused', status: 409, reason: 'you have already voted on this review: one vote per person' };
  const stage = state.stages[state.stage];
  if (!isEligible(stage, voter)) {
    const later = state.stages.findIndex((candidate, index) => index > state.stage && isEligible(candidate, voter));
    const reason =
      later >= 0
        ? `you approve at stage ${later + 1} (${state.stages[later].name}), which has not begun: stage ${state.stage + 1} (${stage.name}) votes now`
        : `you are not an approver of stage ${state.stage + 1} (${stage.name}) of this review's workflow`;
    return { kind: 'refused', status: 403, reason };
  }
  const modifiedAction = input.decision_type === 'modify' ? (input.modified_action ?? null) : state.modified_action;
  const vote: Vote = {
    user_id: voter.id,
    user_name: voter.name,
    stage: state.stage,
    decision_type: input.decision_type,
    modified_action: input.decision_type === 'modify' ? (input.modified_action ?? null) : null,
    notes: input.notes ?? null,
    created_at: now,
  };
  const counted: WorkflowState = { ...state, votes: [...state.votes, vote], modified_action: modifiedAction };
  if (input.decision_type === 'reject') {
    return { kind: 'decided', state: counted, decision: { decision_type: 'reject', modified_action: null, notes: vote.notes } };
  }
  if (approvalsIn(counted) < stage.required_approvals) return { kind: 'counted', state: counted };
  const advanced = { ...counted, stage: counted.stage + 1 };
  if (advanced.stage < advanced.stages.length) return { kind: 'counted', state: advanced };
  return {
    kind: 'decided',
    state: advanced,
    decision: modifiedAction === null ? { decision_type: 'approve', modified_action: null, notes: vote.notes } : { decision_type: 'modify', modified_action: modifiedAction, notes: vote.notes },
  };
}

/**
 * The state as the API shows it, with who may still vote now among `voters` (the
 * organization's active people): a stage nobody left can complete is stuck.
 */
export function progressOf(state: WorkflowState, voters: readonly Voter[]): WorkflowProgress {
  const done = state.stage >= state.stages.length || state.votes.some((vote) => vote.decision_type === 'reject');
  const voted = new Set(state.votes.map((vote) => vote.user_id));
  const current = state.stages[state.stage];
  const waitingOn = done || !current ? [] : voters.filter((voter) => !voted.has(voter.id) && isEligible(current, voter)).map((voter) => voter.id);
  return {
    id: state.workflow_id,
    name: state.name,
    stage: state.stage,
    stages: state.stages.map((stage, index) => ({ name: stage.name, required_approvals: stage.required_approvals, approvals: approvalsIn(state, index) })),
    votes: state.votes,
    modified_action: state.modified_action,
    waiting_on: waitingOn,
    stuck: !done && current !== undefined && waitingOn.length < current.required_approvals - approvalsIn(state),
  };
}
