import { describe, expect, it } from 'vitest';
import { decides, describeApprovers, eligibleApprovers, newStageForm, type StageForm, stageFormOf, stageOf, stageProblem } from './approvers';
import type { Schemas, UserRecord } from './types';

function person(id: number, name: string, role: UserRecord['role'], is_active = true): UserRecord {
  return { id, organization_id: 1, email: `${name.toLowerCase()}@acme.example`, name, role, is_active, password_set: true, slack_user_id: null, created_at: '', updated_at: '' };
}

const ana = person(1, 'Ana', 'reviewer');
const ben = person(2, 'Ben', 'admin');
const vic = person(3, 'Vic', 'viewer');
const gus = person(4, 'Gus', 'reviewer', false);
const users = [ana, ben, vic, gus];
const finance: Schemas['Team'] = {
  id: 9,
  organization_id: 1,
  name: 'finance',
  settings: {},
  created_at: '',
  members: [ana, vic, gus].map(({ id, email, name, role }) => ({ id, email, name, role })),
};

const stage = (fields: Partial<StageForm>): StageForm => ({ ...newStageForm(), name: 'finance', ...fields });

describe('who may decide', () => {
  it('is an active reviewer or admin: never a viewer, nor a deactivated person', () => {
    expect(users.filter(decides)).toEqual([ana, ben]);
  });

  it("counts a stage's approvers once each, its team's viewers and deactivated members left out", () => {
    expect(eligibleApprovers({ userIds: [1], teamId: 9, roles: ['admin'] }, users, [finance])).toEqual([ana, ben]);
    expect(eligibleApprovers({ userIds: [], teamId: 9, roles: [] }, users, [finance])).toEqual([ana]);
  });
});

describe('a stage of the form', () => {
  it('says what keeps it from working', () => {
    expect(stageProblem(stage({ name: ' ', roles: ['admin'] }), 0, users, [finance])).toBe('Stage 1 needs a name.');
    expect(stageProblem(stage({ userIds: [4] }), 0, users, [finance])).toBe('Stage 1: Gus is deactivated; remove them.');
    expect(stageProblem(stage({}), 1, users, [finance])).toBe('Stage 2: choose who approves it — people, a team or roles.');
    expect(stageProblem(stage({ userIds: [3] }), 0, users, [finance])).toBe('Stage 1: Vic is a viewer, who cannot decide; remove them.');
    expect(stageProblem(stage({ teamId: 9, requiredApprovals: 2 }), 0, users, [finance])).toBe(
      'Stage 1 asks for 2 approvals, but only 1 person may approve it: add approvers, or ask for fewer.',
    );
    expect(stageProblem(stage({ teamId: 9, roles: ['admin'], requiredApprovals: 2 }), 0, users, [finance])).toBeNull();
  });

  it('becomes the stage the API takes, naming only the kinds of approvers chosen, and back', () => {
    const form = stage({ name: ' finance ', teamId: 9, requiredApprovals: 1 });
    expect(stageOf(form)).toEqual({ name: 'finance', approvers: { team_id: 9 }, required_approvals: 1 });
    const stored = { name: 'managers', approvers: { user_ids: [2], roles: ['admin' as const] }, required_approvals: 1 };
    expect(stageOf(stageFormOf(stored))).toEqual(stored);
  });

  it('describes its approvers by name', () => {
    expect(describeApprovers({ user_ids: [1, 99], team_id: 9, roles: ['admin'] }, users, [finance])).toBe('Ana, user #99, team finance, every admin');
  });
});
