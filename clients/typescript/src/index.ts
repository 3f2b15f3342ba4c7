export { GreenlightClient } from './client.js';
export type {
  Attachment,
  AttachmentInput,
  Decision,
  DecisionInput,
  Feedback,
  FeedbackInput,
  GreenlightClientOptions,
  RequestReviewOptions,
  Review,
  ReviewInput,
  ReviewQuery,
  UploadOptions,
  VoteRecorded,
} from './client.js';
export { GreenlightConnectionError, GreenlightError, GreenlightUnavailableError, type Problem } from './errors.js';
export type { EventsOptions, GreenlightEvent } from './events.js';
export type { RetryInfo, RetryReason } from './retry.js';
export { actionSha256, ReceiptError, verifyReceipt, type ReceiptClaims, type ReceiptFailure, type VerifyReceiptOptions } from './receipts.js';
export { ToolCallReviewer, type ToolCall, type ToolCallOutcome, type ToolInput, type ToolReviewOptions } from './tool-review.js';
export type { components, operations, paths } from './generated/openapi.js';
