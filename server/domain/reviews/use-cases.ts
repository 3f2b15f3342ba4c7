import type { OrganizationRouting } from '../routing/organization-rules';
import type { Policy } from '../routing/review-policy';
import type { AgentRepository } from '../organizations/ports';
import type { Clock, UnitOfWork } from '../shared/unit-of-work';
import type { PeopleRepository } from '../people/ports';
import type { ReviewRepository } from './ports';
import type { DecisionWaiters } from './waiters';
import type { Workflows } from '../workflows/workflows';
import { DecideReview } from './deciding';
import type { DecisionReceipts } from './receipts';
import { ReadReviews } from './reading';
import { SubmitReview } from './submitting';
import { WaitForDecision } from './waiting';

/** What HTTP, MCP, the CLI and the desktop app do with reviews: one use case each. */
export interface ReviewUseCases {
  submitting: SubmitReview;
  reading: ReadReviews;
  deciding: DecideReview;
  waiting: WaitForDecision;
}

export interface ReviewUseCaseOptions {
  reviews: ReviewRepository;
  /** Registered agents: in an organization, a review's `agent_id` must name one of its own. */
  agents?: AgentRepository;
  /** An organization's people: its decisions are theirs, by id (hosted edition). */
  people?: PeopleRepository;
  /** An organization's own routing rules, tried before the `routing` setting (hosted edition). */
  organizationRouting?: Pick<OrganizationRouting, 'route'>;
  /** Approval workflows: a governed review is decided by votes (hosted edition). */
  workflows?: Workflows;
  /** Signs each decision's receipt when it is recorded. */
  receipts: DecisionReceipts;
  unitOfWork: UnitOfWork;
  waiters: DecisionWaiters;
  /** The policy in force now (it can be reloaded while the service runs). */
  policy: () => Policy;
  /** Most requests held waiting for decisions at once (`max_waiting_requests`). */
  maxWaiting?: number;
  /** Refuse text with control, bidi, zero-width or other hidden characters (`refuse_hidden_characters`). */
  refuseHiddenCharacters?: boolean;
  clock?: Clock;
}

/** The review use cases over one set of repositories. */
export function reviewUseCases(options: ReviewUseCaseOptions): ReviewUseCases {
  const { reviews, agents, people, organizationRouting, workflows, receipts, unitOfWork, waiters, policy, maxWaiting, refuseHiddenCharacters, clock } = options;
  const reading = new ReadReviews({ reviews, people, workflows });
  const waiting = new WaitForDecision({ reviews, waiters, maxWaiting });
  return {
    reading,
    waiting,
    submitting: new SubmitReview({ reviews, agents, organizationRouting, workflows, receipts, unitOfWork, policy, refuseHiddenCharacters, read: reading, waiting, clock }),
    deciding: new DecideReview({ reviews, people, workflows, receipts, unitOfWork, clock }),
  };
}
