// `resolution-mode`: the tests compile as CommonJS, and the client package is ESM.
import type { components } from '@greenlight/client' with { 'resolution-mode': 'import' };
import { describe, expectTypeOf, it } from 'vitest';
import type { RoutingTrial } from '../../server/domain/routing/organization-rules';
import type { Operator, RULE_FIELDS } from '../../server/domain/routing/conditions';
import type * as organizations from '../../server/domain/organizations/records';
import type * as people from '../../server/domain/people/records';
import type * as reviews from '../../server/domain/reviews/records';
import type * as routing from '../../server/domain/routing/records';
import type * as webhooks from '../../server/domain/webhooks/records';
import type * as workflows from '../../server/domain/workflows/records';
import type * as evaluations from '../../server/domain/evaluations/records';
import type { ReviewCreate } from '../../server/mcp/review-create';

type Schemas = components['schemas'];

/**
 * server/domain declares its records itself, since it imports nothing outside itself; the
 * dashboard and the clients take theirs from the OpenAPI document (the types @greenlight/client
 * generates from it). These assertions hold the two to each other. They are checked by the
 * compiler (`npm run typecheck`), so a field added, dropped or retyped on one side only fails
 * there; run by Vitest they have nothing left to check.
 */
describe('the records the API exchanges', () => {
  it('are declared by the domain as the OpenAPI document describes them', () => {
    expectTypeOf<reviews.ReviewRecord>().toEqualTypeOf<Schemas['Review']>();
    expectTypeOf<reviews.DecisionRecord>().toEqualTypeOf<Schemas['Decision']>();
    expectTypeOf<reviews.ReceiptClaims>().toEqualTypeOf<Schemas['ReceiptClaims']>();
    expectTypeOf<reviews.VoteAnswer>().toEqualTypeOf<Schemas['VoteRecorded']>();
    expectTypeOf<reviews.FeedbackRecord>().toEqualTypeOf<Schemas['Feedback']>();
    expectTypeOf<reviews.AttachmentRecord>().toEqualTypeOf<Schemas['Attachment']>();
    expectTypeOf<reviews.Statistics>().toEqualTypeOf<Schemas['Statistics']>();
    expectTypeOf<people.UserRecord>().toEqualTypeOf<Schemas['User']>();
    expectTypeOf<people.SessionView>().toEqualTypeOf<Schemas['Session']>();
    expectTypeOf<people.InvitationView>().toEqualTypeOf<Schemas['InvitationDetails']>();
    expectTypeOf<webhooks.WebhookRecord>().toEqualTypeOf<Schemas['Webhook']>();
    expectTypeOf<webhooks.WebhookDeliveryRecord>().toEqualTypeOf<Schemas['WebhookDelivery']>();
    expectTypeOf<organizations.OrganizationRecord>().toEqualTypeOf<Schemas['Organization']>();
    expectTypeOf<organizations.ApiKeyRecord>().toEqualTypeOf<Schemas['ApiKey']>();
    expectTypeOf<organizations.AgentRecord>().toEqualTypeOf<Schemas['Agent']>();
    expectTypeOf<people.TeamRecord>().toEqualTypeOf<Schemas['Team']>();
    expectTypeOf<organizations.AuditRecord>().toEqualTypeOf<Schemas['AuditEntry']>();
    expectTypeOf<routing.RoutingRuleRecord>().toEqualTypeOf<Schemas['RoutingRule']>();
    expectTypeOf<workflows.WorkflowRecord>().toEqualTypeOf<Schemas['Workflow']>();
    expectTypeOf<evaluations.EvalRecord>().toEqualTypeOf<Schemas['Eval']>();
    expectTypeOf<routing.RuleAgreement>().toEqualTypeOf<Schemas['RoutingRuleAgreement']>();
    // The domain's is narrower (each condition's operator is one the engine knows), and fits the document's.
    expectTypeOf<RoutingTrial>().toExtend<Schemas['RoutingTrial']>();
    // What the console's condition form offers, from the document: the engine's own lists.
    expectTypeOf<Operator>().toEqualTypeOf<Schemas['RoutingOperator']>();
    expectTypeOf<(typeof RULE_FIELDS)[number]>().toEqualTypeOf<Schemas['RoutingField']>();
  });

  it('are taken in by the domain as the OpenAPI document describes them', () => {
    // What the MCP tool reads from the document at run time, typed as the domain's ReviewInput.
    expectTypeOf<reviews.ReviewInput>().toEqualTypeOf<Omit<Schemas['ReviewCreate'], 'blocking'>>();
    expectTypeOf<ReviewCreate['blocking']>().toEqualTypeOf<Schemas['ReviewCreate']['blocking']>();
    expectTypeOf<reviews.DecisionInput>().toEqualTypeOf<Schemas['DecisionCreate']>();
    expectTypeOf<reviews.FeedbackInput>().toEqualTypeOf<Schemas['FeedbackCreate']>();
  });
});
