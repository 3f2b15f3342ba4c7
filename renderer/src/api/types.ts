/**
 * The API's records, taken from the server's own type definitions (types only: nothing of
 * the server is bundled), so the dashboard and the API cannot disagree on a field.
 */
export type {
  AttachmentRecord,
  DecisionInput,
  DecisionRecord,
  DecisionType,
  DecisionsOnDay,
  FeedbackRecord,
  InvitationView,
  ReviewOrder,
  ReviewPage,
  ReviewRecord,
  ReviewStatus,
  SessionView,
  Statistics,
  Urgency,
  UserRecord,
  UserRole,
  VoteAnswer,
  WorkflowProgress,
  WorkflowVote,
} from '../../../server/domain/records';

import type { ReviewFilters as StoredReviewFilters } from '../../../server/domain/records';

/**
 * The list's filters as the dashboard sends them: `mine` where the API works out whose
 * reviews they are (the signed-in person's and their teams'), rather than the resolved lists.
 */
export type ReviewFilters = Omit<StoredReviewFilters, 'assigned_to_any'> & { mine?: boolean };

/** Which edition the API is: the hosted one signs people in. */
export type Edition = 'self-hosted' | 'hosted';

export type { EventType, EventPayloads as ServiceEvents } from '../../../server/domain/events';

export const URGENCY_ORDER = ['critical', 'high', 'medium', 'low'] as const;
export const STATUSES = ['pending', 'approved', 'rejected', 'modified'] as const;

/** An RFC 9457 problem document as the API sends it. */
export interface Problem {
  status: number;
  title?: string;
  detail?: string;
  errors?: Array<{ field: string; message: string }>;
  [member: string]: unknown;
}
