import type { ReviewRecord } from '../../server/domain/reviews/records';

/** A pending review as the API returns it, for tests of what shows one (MCP answers, chat messages). */
export function pendingReview(overrides: Partial<ReviewRecord> = {}): ReviewRecord {
  return {
    id: 12,
    task_type: 'refund',
    proposed_action: 'Refund order 1042 in full',
    agent_reasoning: null,
    confidence_score: 0.8,
    urgency: 'high',
    framework: null,
    metadata: {},
    organization_id: null,
    agent_id: null,
    agent_name: null,
    status: 'pending',
    assigned_to: null,
    assigned_team: null,
    routing_rule: null,
    created_at: '2026-11-22T10:00:00.000Z',
    updated_at: '2026-11-22T10:00:00.000Z',
    decided_at: null,
    expires_at: null,
    waiting_until: null,
    decision: null,
    ...overrides,
  };
}
