import type { Config } from '../config/settings';
import { AgentStore } from '../db/agent-store';
import { AuditStore } from '../db/audit-store';
import { OrganizationStore } from '../db/organization-store';
import { Outbox } from '../db/outbox';
import { PeopleStore } from '../db/people-store';
import { RoutingRuleStore } from '../db/routing-rule-store';
import { DatabaseUnitOfWork } from '../db/unit-of-work';
import { WebhookStore } from '../db/webhook-store';
import { SlackInstallationStore } from '../db/slack-installation-store';
import { WorkflowStore } from '../db/workflow-store';
import { EventFeed } from '../domain/shared/events';
import { silentLogger } from '../logging';
import { openMigratedDatabase } from './database';
import { editionOf } from './edition';
import { type HostedServices, hostedServices } from './services';

/** An operator's way into a hosted installation's database, beside its API: `greenlight org create`. */
export interface Administration {
  organizations: HostedServices['organizations'];
  people: HostedServices['people'];
  close(): Promise<void>;
}

/**
 * The hosted edition's use cases on the configured database, migrated, for one command. Every
 * change is audited as the API audits it; nothing listens here, and the API processes learn of
 * nothing an organization's creation changes. Null outside the hosted edition.
 */
export async function openAdministration(config: Config): Promise<Administration | null> {
  if (!editionOf(config).organizations) return null;
  const db = await openMigratedDatabase(config, silentLogger);
  const stores = {
    organizations: new OrganizationStore(db),
    agents: new AgentStore(db),
    audit: new AuditStore(db),
    people: new PeopleStore(db),
    routingRules: new RoutingRuleStore(db),
    workflows: new WorkflowStore(db),
    webhooks: new WebhookStore(db),
    slackInstallations: new SlackInstallationStore(db),
  };
  const unitOfWork = new DatabaseUnitOfWork(db, new Outbox(db, Date.now), new EventFeed(), { auditLog: stores.audit });
  const hosted = hostedServices(config, stores, unitOfWork, Date.now, undefined, () => undefined);
  return { organizations: hosted.organizations, people: hosted.people, close: () => db.close() };
}
