import type { OrganizationRouting } from '../routing/organization-rules';
import type { Policy } from '../routing/review-policy';
import type { Clock, Log, UnitOfWork } from '../shared/unit-of-work';
import type { PeopleRepository } from '../people/ports';
import type { AttachmentService } from './attachments';
import type { ReviewRepository, ReviewWaitRepository } from './ports';
import type { Scope } from '../shared/principal';
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
  /** An organization's people: its decisions are theirs, by id (hosted edition). */
  people?: PeopleRepository;
  /** An organization's own routing rules, tried before the `routing` setting (hosted edition). */
  organizationRouting?: Pick<OrganizationRouting, 'route' | 'saveMark' | 'withMarks'>;
  /** Approval workflows: a governed review is decided by votes (hosted edition). */
  workflows?: Workflows;
  /** Signs each decision's receipt when it is recorded. */
  receipts: DecisionReceipts;
  unitOfWork: UnitOfWork;
  waiters: DecisionWaiters;
  /** Where waits are written down for every process to see (`waiting_until`), and where a failure to is reported. */
  waits?: ReviewWaitRepository;
  log?: Pick<Log, 'error'>;
  /** The policy in force now (it can be reloaded while the service runs). */
  policy: () => Policy;
  /** Most requests held waiting for decisions at once (`max_waiting_requests`). */
  maxWaiting?: number;
  /** Refuse text with control, bidi, zero-width or other hidden characters (`refuse_hidden_characters`). */
  refuseHiddenCharacters?: boolean;
  /** Files a review may be filed with (a multipart create, MCP's request_review). */
  attachments?: AttachmentService;
  clock?: Clock;
}

/** The review use cases over one set of repositories. */
export function reviewUseCases(options: ReviewUseCaseOptions): ReviewUseCases {
  const { reviews, people, organizationRouting, workflows, receipts, unitOfWork, waiters, waits, log, policy, maxWaiting, refuseHiddenCharacters, attachments, clock } = options;
  const reading = new ReadReviews({ reviews, people, workflows, marks: organizationRouting });
  const shown = waits && log ? { waits, unitOfWork, log, read: (scope: Scope, id: number) => reading.get(scope, id) } : undefined;
  const waiting = new WaitForDecision({ reviews, waiters, maxWaiting, shown, clock });
  return {
    reading,
    waiting,
    submitting: new SubmitReview({ reviews, organizationRouting, workflows, receipts, unitOfWork, policy, refuseHiddenCharacters, read: reading, waiting, attachments, clock }),
    deciding: new DecideReview({ reviews, people, workflows, receipts, unitOfWork, clock }),
  };
}
