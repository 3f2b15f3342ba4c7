import { describe, expect, it } from 'vitest';
import type { ReviewRecord } from '../../server/domain/reviews/records';
import { describeOutcome, reviewOutcome } from '../../server/mcp/outcome';
import { pendingReview } from '../support/records';

const pending = pendingReview();

function decided(decision_type: 'approve' | 'reject' | 'modify', extra: { notes?: string; modified_action?: string; reviewer_name?: string } = {}): ReviewRecord {
  const status = ({ approve: 'approved', reject: 'rejected', modify: 'modified' } as const)[decision_type];
  return {
    ...pending,
    status,
    decided_at: '2026-11-22T10:05:00.000Z',
    decision: {
      id: 1,
      review_id: 12,
      decision_type,
      reviewer_id: null,
      reviewer_name: extra.reviewer_name ?? null,
      modified_action: extra.modified_action ?? null,
      notes: extra.notes ?? null,
      created_at: '2026-11-22T10:05:00.000Z',
      receipt: null,
    },
  };
}

describe('what an agent reads about a review', () => {
  it('puts the verdict first, in the words the tool descriptions promise', () => {
    expect(describeOutcome(decided('approve', { reviewer_name: 'dana' }))).toBe(
      'approved\nReview 12 was approved by dana: carry out the proposed action as proposed.',
    );
    expect(describeOutcome(decided('reject', { notes: 'duplicate refund' }))).toMatch(/^rejected: duplicate refund\nReview 12 was rejected: do not carry out/);
    expect(describeOutcome(decided('modify', { modified_action: 'Refund half', notes: 'policy' }))).toBe(
      "modified: use this action instead: Refund half\nReview 12 was modified: carry out the action above, not the one you proposed.\nReviewer's notes: policy",
    );
  });

  it('never leaves a rejection without a reason to read', () => {
    expect(describeOutcome(decided('reject'))).toMatch(/^rejected: no reason given\n/);
  });

  it('tells the agent not to act yet, and how to check later, while pending', () => {
    const timedOut = describeOutcome(pending, { kind: 'timed_out', waitedSeconds: 300 });
    expect(timedOut).toMatch(/^pending\nNo decision on review 12 within 300 s; it stays pending\. Do not carry out the action yet\./);
    expect(timedOut).toContain('get_review_decision with {"review_id": 12');
    expect(describeOutcome(pending, { kind: 'unavailable', reason: 'Greenlight is shutting down' })).toContain(
      'Stopped waiting for review 12 because Greenlight is shutting down; it stays pending.',
    );
  });

  it('tells an agent answered before its client would time out to keep waiting, with a wait the server will honour', () => {
    const early = describeOutcome(pending, { kind: 'answered_early', waitedSeconds: 50 });
    expect(early).toMatch(/^pending\nNo decision on review 12 yet after 50 s; answering now so that your MCP client does not time out\. Do not carry out the action yet\./);
    expect(early).toContain('call get_review_decision with {"review_id": 12, "wait_seconds": 50} now, and again each time it answers "pending"');
  });

  it('offers the action to take only when the agent may act', () => {
    expect(reviewOutcome(pending).action_to_take).toBeNull();
    expect(reviewOutcome(decided('reject')).action_to_take).toBeNull();
    expect(reviewOutcome(decided('approve')).action_to_take).toBe('Refund order 1042 in full');
    expect(reviewOutcome(decided('modify', { modified_action: 'Refund half' })).action_to_take).toBe('Refund half');
  });
});
