import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { castVote, startWorkflow, TWO_APPROVALS, type Voter, type VoteResult, type WorkflowStage, type WorkflowState } from '../../server/domain/workflows/voting';

const NOW = '2026-11-24T09:00:00.000Z';

function voter(id: number, extra: Partial<Voter> = {}): Voter {
  return { id, name: `Person ${id}`, role: 'reviewer', team_ids: [], ...extra };
}

/** Stages whose approvers are listed by id: stage s has people s*10+1 … s*10+n. */
function stagesOf(shape: ReadonlyArray<{ people: number; required: number }>): WorkflowStage[] {
  return shape.map(({ people, required }, index) => ({
    name: `stage ${index + 1}`,
    approvers: { user_ids: Array.from({ length: people }, (_, person) => index * 10 + person + 1) },
    required_approvals: required,
  }));
}

/** Every approver of every stage, by id. */
function everyone(shape: ReadonlyArray<{ people: number }>): number[] {
  return stagesOf(shape.map(({ people }) => ({ people, required: 1 }))).flatMap((stage) => stage.approvers.user_ids ?? []);
}

/** Applies votes one after another, as the database's row lock makes concurrent ones. */
function run(state: WorkflowState, votes: ReadonlyArray<[Voter, Parameters<typeof castVote>[2]]>): { state: WorkflowState; results: VoteResult[] } {
  const results: VoteResult[] = [];
  let current = state;
  for (const [who, input] of votes) {
    const result = castVote(current, who, input, NOW);
    results.push(result);
    if (result.kind !== 'refused') current = result.state;
  }
  return { state: current, results };
}

describe('an approval workflow', () => {
  it('decides exactly once, on the last stage’s last required approval, whatever the order of the votes (1–3 stages, M of N)', () => {
    const shapes = fc.array(fc.integer({ min: 1, max: 4 }).chain((people) => fc.record({ people: fc.constant(people), required: fc.integer({ min: 1, max: people }) })), { minLength: 1, maxLength: 3 });
    fc.assert(
      fc.property(
        shapes.chain((shape) => fc.tuple(fc.constant(shape), fc.shuffledSubarray(everyone(shape), { minLength: everyone(shape).length }))),
        ([shape, order]) => {
          const stages = stagesOf(shape);
          const { results, state } = run(startWorkflow({ workflow_id: 1, name: 'w', stages }), order.map((id) => [voter(id), { decision_type: 'approve' }] as const));
          // Replaying the order by hand: a vote counts only while its stage is the one voting.
          let stage = 0;
          let approvals = 0;
          const expected = order.map((id) => {
            if (stage >= stages.length) return 'refused';
            const own = Math.floor((id - 1) / 10);
            if (own !== stage) return 'refused';
            approvals += 1;
            if (approvals < shape[stage].required) return 'counted';
            stage += 1;
            approvals = 0;
            return stage < stages.length ? 'counted' : 'decided';
          });
          expect(results.map((result) => result.kind)).toEqual(expected);
          expect(results.filter((result) => result.kind === 'decided')).toHaveLength(stage === stages.length ? 1 : 0);
          expect(state.stage).toBe(stage);
        },
      ),
      { numRuns: 300 },
    );
  });

  it('lets two last votes at once complete the review only once: the second finds it finished', () => {
    const state = startWorkflow({ workflow_id: 1, name: 'w', stages: stagesOf([{ people: 3, required: 2 }]) });
    const { results } = run(state, [
      [voter(1), { decision_type: 'approve' }],
      [voter(2), { decision_type: 'approve' }],
      [voter(3), { decision_type: 'approve' }],
    ]);
    expect(results.map((result) => result.kind)).toEqual(['counted', 'decided', 'refused']);
    expect(results[2]).toMatchObject({ status: 409, reason: 'the workflow has already finished' });
  });

  it('counts one vote per person', () => {
    const { results } = run(startWorkflow(TWO_APPROVALS), [
      [voter(1), { decision_type: 'approve' }],
      [voter(1), { decision_type: 'approve' }],
    ]);
    expect(results[1]).toEqual({ kind: 'refused', status: 409, reason: 'you have already voted on this review: one vote per person' });
  });

  it('ends the review rejected on any approver’s reject, after partial approvals too', () => {
    const { results, state } = run(startWorkflow({ workflow_id: 1, name: 'w', stages: stagesOf([{ people: 2, required: 1 }, { people: 3, required: 3 }]) }), [
      [voter(1), { decision_type: 'approve' }],
      [voter(11), { decision_type: 'approve' }],
      [voter(12), { decision_type: 'reject', notes: 'Not without the invoice.' }],
    ]);
    expect(results.map((result) => result.kind)).toEqual(['counted', 'counted', 'decided']);
    expect(results[2]).toMatchObject({ decision: { decision_type: 'reject', notes: 'Not without the invoice.' } });
    expect(state.votes).toHaveLength(3);
  });

  it('has later votes approve a modified action, and ends modified', () => {
    const { results, state } = run(startWorkflow(TWO_APPROVALS), [
      [voter(1), { decision_type: 'modify', modified_action: 'Refund EUR 900, not 1,250' }],
      [voter(2, { role: 'admin' }), { decision_type: 'approve', notes: 'Fine at 900.' }],
    ]);
    expect(results[1]).toMatchObject({ kind: 'decided', decision: { decision_type: 'modify', modified_action: 'Refund EUR 900, not 1,250', notes: 'Fine at 900.' } });
    expect(state.modified_action).toBe('Refund EUR 900, not 1,250');
  });

  it('refuses who is not an approver, and who approves only at a later stage until it begins', () => {
    const stages: WorkflowStage[] = [
      { name: 'finance', approvers: { team_id: 7 }, required_approvals: 1 },
      { name: 'manager', approvers: { roles: ['admin'] }, required_approvals: 1 },
    ];
    const state = startWorkflow({ workflow_id: 2, name: 'refunds', stages });
    const manager = voter(5, { role: 'admin' });
    expect(castVote(state, manager, { decision_type: 'approve' }, NOW)).toEqual({
      kind: 'refused',
      status: 403,
      reason: 'you approve at stage 2 (manager), which has not begun: stage 1 (finance) votes now',
    });
    expect(castVote(state, voter(6), { decision_type: 'approve' }, NOW)).toMatchObject({ kind: 'refused', status: 403, reason: /not an approver of stage 1 \(finance\)/ });
    const afterFinance = castVote(state, voter(8, { team_ids: [7] }), { decision_type: 'approve' }, NOW);
    expect(afterFinance.kind).toBe('counted');
    expect(castVote((afterFinance as { state: WorkflowState }).state, manager, { decision_type: 'approve' }, NOW).kind).toBe('decided');
  });

  it('lets a viewer, whose role is not among the approvers, never vote in the built-in two approvals', () => {
    expect(castVote(startWorkflow(TWO_APPROVALS), voter(3, { role: 'viewer' }), { decision_type: 'approve' }, NOW)).toMatchObject({ kind: 'refused', status: 403 });
  });
});
