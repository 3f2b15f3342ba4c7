/**
 * Who the console offers where it asks for someone to decide — a routing rule's assignee, a
 * workflow stage's approvers — and a workflow's stages as its form holds them. The API refuses
 * what these leave out (a viewer, a deactivated person, more approvals than approvers), and the
 * form says so first, in the admin's words.
 */
import { enumValues, type Schemas, type UserRecord } from './types';

export type WorkflowStage = Schemas['WorkflowStage'];
export type ApproverRole = NonNullable<WorkflowStage['approvers']['roles']>[number];
type TeamRecord = Schemas['Team'];

/** The roles whose people decide: the document's approver roles (a viewer only reads). */
export const APPROVER_ROLES = enumValues<ApproverRole>({ reviewer: true, admin: true });

/** Whether a person may be asked to decide: active, and of a role that decides. */
export function decides(user: Pick<UserRecord, 'is_active' | 'role'>): boolean {
  return user.is_active && (APPROVER_ROLES as readonly string[]).includes(user.role);
}

/** Why a person chosen earlier cannot decide now, in a word for beside their name; null when they can. */
export function cannotDecide(user: Pick<UserRecord, 'is_active' | 'role'>): 'deactivated' | UserRecord['role'] | null {
  if (!user.is_active) return 'deactivated';
  return decides(user) ? null : user.role;
}

/** A stage as its form holds it; `key` tells stages apart while they are moved. */
export interface StageForm {
  key: number;
  name: string;
  userIds: number[];
  teamId: number | null;
  roles: ApproverRole[];
  requiredApprovals: number;
}

let nextKey = 0;

export function newStageForm(): StageForm {
  return { key: nextKey++, name: '', userIds: [], teamId: null, roles: [], requiredApprovals: 1 };
}

export function stageFormOf(stage: WorkflowStage): StageForm {
  const { user_ids: userIds = [], team_id: teamId = null, roles = [] } = stage.approvers;
  return { key: nextKey++, name: stage.name, userIds: [...userIds], teamId, roles: [...roles], requiredApprovals: stage.required_approvals };
}

/** The stage the API takes: only the kinds of approvers the form names. */
export function stageOf(form: StageForm): WorkflowStage {
  return {
    name: form.name.trim(),
    approvers: {
      ...(form.userIds.length > 0 ? { user_ids: [...form.userIds] } : {}),
      ...(form.teamId !== null ? { team_id: form.teamId } : {}),
      ...(form.roles.length > 0 ? { roles: [...form.roles] } : {}),
    },
    required_approvals: form.requiredApprovals,
  };
}

/** The people who may approve a stage now: active reviewers and admins it names, on its team, or of its roles. */
export function eligibleApprovers(form: Pick<StageForm, 'userIds' | 'teamId' | 'roles'>, users: readonly UserRecord[], teams: readonly TeamRecord[]): UserRecord[] {
  const team = teams.find((candidate) => candidate.id === form.teamId);
  const onTeam = new Set(team?.members.map((member) => member.id));
  return users.filter(
    (user) => decides(user) && (form.userIds.includes(user.id) || onTeam.has(user.id) || (form.roles as readonly string[]).includes(user.role)),
  );
}

/** What keeps a stage from working, for beside it (numbered from 1); null when nothing does. */
export function stageProblem(form: StageForm, index: number, users: readonly UserRecord[], teams: readonly TeamRecord[]): string | null {
  const stage = `Stage ${index + 1}`;
  if (form.name.trim() === '') return `${stage} needs a name.`;
  if (!namesApprovers(form)) return `${stage}: choose who approves it — people, a team or roles.`;
  const chosen = users.filter((user) => form.userIds.includes(user.id));
  const unfit = chosen.find((user) => !decides(user));
  if (unfit) return `${stage}: ${unfit.name} ${unfit.is_active ? `is a ${unfit.role}, who cannot decide` : 'is deactivated'}; remove them.`;
  return approvalsProblem(form, index, users, teams);
}

/** Whether a stage asks for approvals its approvers can give; what is wrong when it does not. */
export function approvalsProblem(form: StageForm, index: number, users: readonly UserRecord[], teams: readonly TeamRecord[]): string | null {
  const stage = `Stage ${index + 1}`;
  if (!Number.isInteger(form.requiredApprovals) || form.requiredApprovals < 1) return `${stage}: ask for at least 1 approval.`;
  const eligible = eligibleApprovers(form, users, teams).length;
  if (form.requiredApprovals > eligible) {
    return `${stage} asks for ${form.requiredApprovals} approvals, but only ${eligible} ${eligible === 1 ? 'person' : 'people'} may approve it: add approvers, or ask for fewer.`;
  }
  return null;
}

/** Whether the form names any approvers for a stage yet. */
export function namesApprovers(form: Pick<StageForm, 'userIds' | 'teamId' | 'roles'>): boolean {
  return form.userIds.length > 0 || form.teamId !== null || form.roles.length > 0;
}

/** A stage's approvers in words, for the workflows' table: `Dana Reviewer, team finance, every admin`. */
export function describeApprovers(approvers: WorkflowStage['approvers'], users: readonly UserRecord[], teams: readonly TeamRecord[]): string {
  const people = (approvers.user_ids ?? []).map((id) => users.find((user) => user.id === id)?.name ?? `user #${id}`);
  const team = approvers.team_id === undefined ? [] : [`team ${teams.find((candidate) => candidate.id === approvers.team_id)?.name ?? `#${approvers.team_id}`}`];
  const roles = (approvers.roles ?? []).map((role) => `every ${role}`);
  return [...people, ...team, ...roles].join(', ');
}
