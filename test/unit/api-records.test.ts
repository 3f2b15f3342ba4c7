// `resolution-mode`: the tests compile as CommonJS, and the client package is ESM.
import type { components } from '@greenlight/client' with { 'resolution-mode': 'import' };
import { describe, expectTypeOf, it } from 'vitest';
import type { RoutingTrial } from '../../server/domain/organization-routing';
import type * as ports from '../../server/domain/ports';
import type * as records from '../../server/domain/records';
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
    expectTypeOf<records.ReviewRecord>().toEqualTypeOf<Schemas['Review']>();
    expectTypeOf<records.DecisionRecord>().toEqualTypeOf<Schemas['Decision']>();
    expectTypeOf<records.VoteAnswer>().toEqualTypeOf<Schemas['VoteRecorded']>();
    expectTypeOf<records.FeedbackRecord>().toEqualTypeOf<Schemas['Feedback']>();
    expectTypeOf<records.AttachmentRecord>().toEqualTypeOf<Schemas['Attachment']>();
    expectTypeOf<records.Statistics>().toEqualTypeOf<Schemas['Statistics']>();
    expectTypeOf<records.UserRecord>().toEqualTypeOf<Schemas['User']>();
    expectTypeOf<records.SessionView>().toEqualTypeOf<Schemas['Session']>();
    expectTypeOf<records.InvitationView>().toEqualTypeOf<Schemas['InvitationDetails']>();
    expectTypeOf<records.WebhookRecord>().toEqualTypeOf<Schemas['Webhook']>();
    expectTypeOf<records.WebhookDeliveryRecord>().toEqualTypeOf<Schemas['WebhookDelivery']>();
    expectTypeOf<ports.OrganizationRecord>().toEqualTypeOf<Schemas['Organization']>();
    expectTypeOf<ports.ApiKeyRecord>().toEqualTypeOf<Schemas['ApiKey']>();
    expectTypeOf<ports.AgentRecord>().toEqualTypeOf<Schemas['Agent']>();
    expectTypeOf<ports.TeamRecord>().toEqualTypeOf<Schemas['Team']>();
    expectTypeOf<ports.AuditRecord>().toEqualTypeOf<Schemas['AuditEntry']>();
    expectTypeOf<ports.RoutingRuleRecord>().toEqualTypeOf<Schemas['RoutingRule']>();
    expectTypeOf<ports.WorkflowRecord>().toEqualTypeOf<Schemas['Workflow']>();
    // The domain's is narrower (each condition's operator is one the engine knows), and fits the document's.
    expectTypeOf<RoutingTrial>().toExtend<Schemas['RoutingTrial']>();
  });

  it('are taken in by the domain as the OpenAPI document describes them', () => {
    // What the MCP tool reads from the document at run time, typed as the domain's ReviewInput.
    expectTypeOf<records.ReviewInput>().toEqualTypeOf<Omit<Schemas['ReviewCreate'], 'blocking'>>();
    expectTypeOf<ReviewCreate['blocking']>().toEqualTypeOf<Schemas['ReviewCreate']['blocking']>();
    expectTypeOf<records.DecisionInput>().toEqualTypeOf<Schemas['DecisionCreate']>();
    expectTypeOf<records.FeedbackInput>().toEqualTypeOf<Schemas['FeedbackCreate']>();
  });
});
