/**
 * The API's records under the names the dashboard gives them, all taken from the types the
 * client package generates from the API's OpenAPI document, so the dashboard and the API cannot
 * disagree on a field. Types only: nothing of the client package is bundled.
 */
// `resolution-mode`: the tests' tsconfig (test/support) compiles this file as CommonJS, and the client package is ESM.
import type { components, operations } from '@greenlight/client' with { 'resolution-mode': 'import' };

export type Schemas = components['schemas'];

/** The JSON body operation `Id` answers with `status`, for the answers the document describes inline rather than as a schema. */
export type Answer<Id extends keyof operations, Status extends keyof operations[Id]['responses']> =
  operations[Id]['responses'][Status] extends { content: { 'application/json': infer Body } } ? Body : never;

export type AttachmentRecord = Schemas['Attachment'];
export type DecisionInput = Schemas['DecisionCreate'];
export type DecisionRecord = Schemas['Decision'];
export type DecisionType = Schemas['DecisionType'];
export type FeedbackRecord = Schemas['Feedback'];
export type InvitationView = Schemas['InvitationDetails'];
export type ReviewPage = Schemas['ReviewList'];
export type ReviewRecord = Schemas['Review'];
export type ReviewStatus = Schemas['ReviewStatus'];
export type SessionView = Schemas['Session'];
export type Statistics = Schemas['Statistics'];
export type DecisionsOnDay = Statistics['decisions_over_time'][number];
export type Urgency = Schemas['Urgency'];
export type UserRecord = Schemas['User'];
export type UserRole = UserRecord['role'];
export type VoteAnswer = Schemas['VoteRecorded'];
export type WorkflowProgress = Schemas['WorkflowProgress'];
export type WorkflowVote = Schemas['WorkflowVote'];

/** `GET /reviews`' query: the list's filters, its order and the page. */
export type ReviewQuery = NonNullable<operations['listReviews']['parameters']['query']>;
export type ReviewOrder = NonNullable<ReviewQuery['sort']>;
/**
 * The list's filters as the dashboard sends them: `mine` where the API works out whose
 * reviews they are (the signed-in person's and their teams'), rather than the resolved lists.
 */
export type ReviewFilters = Omit<ReviewQuery, 'sort' | 'page' | 'page_size'>;

/** Which edition the API is: the hosted one signs people in. */
export type Edition = Schemas['Health']['edition'];

/** What each live event of `GET /events` carries, by its type. */
export type ServiceEvents = { [Event in Schemas['StreamEvent'] as Event['event']]: Event['data'] };
export type EventType = keyof ServiceEvents;

/**
 * The values of one of the document's enums, in the order the dashboard shows them. They are
 * written as an object's keys (which keep their order) so that the compiler holds the list to
 * the enum exactly: a value the API adds or drops is a compile error here, not a filter or an
 * option silently missing.
 */
export function enumValues<Value extends string>(values: Record<Value, true>): readonly Value[] {
  return Object.keys(values) as Value[];
}

export const URGENCY_ORDER = enumValues<Urgency>({ critical: true, high: true, medium: true, low: true });
export const STATUSES = enumValues<ReviewStatus>({ pending: true, approved: true, rejected: true, modified: true });

/** An RFC 9457 problem document as the API sends it, with the members some add (`decision`, `review_id`, `edition`). */
export type Problem = Schemas['Problem'] & { [member: string]: unknown };
