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
import { EvaluationStore } from '../db/evaluation-store';
import { EventFeed } from '../domain/shared/events';
import { silentLogger } from '../logging';
import { openMigratedDatabase } from './database';
import { editionOf } from './edition';
import { type HostedServices, hostedServices, receiptKeysFor } from './services';
import { ReceiptKeyStore } from '../db/receipt-key-store';
import type { ReceiptKeys } from '../receipts/keys';

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
    evaluations: new EvaluationStore(db),
    webhooks: new WebhookStore(db),
    slackInstallations: new SlackInstallationStore(db),
  };
  const unitOfWork = new DatabaseUnitOfWork(db, new Outbox(db, Date.now), new EventFeed(), { auditLog: stores.audit });
  const hosted = hostedServices(config, stores, unitOfWork, Date.now, undefined, () => undefined);
  return {
    organizations: hosted.organizations,
    people: hosted.people,
    close: async () => {
      // The command's audit entries are chained before it exits, not left for a server's sweep.
      await stores.audit.linker?.stop();
      await db.close();
    },
  };
}

/**
 * The receipt signing keys on the configured database, migrated, for `greenlight keys` (either
 * edition). Neither rotating nor listing decrypts a stored key, so a rotation also recovers an
 * installation whose key-encryption key was lost or changed: the new key is encrypted under
 * the one this process has.
 */
export async function openKeyAdministration(config: Config): Promise<{ keys: Pick<ReceiptKeys, 'rotate' | 'list'>; close(): Promise<void> }> {
  const db = await openMigratedDatabase(config, silentLogger);
  try {
    return { keys: receiptKeysFor(config, new ReceiptKeyStore(db), Date.now), close: () => db.close() };
  } catch (error) {
    await db.close();
    throw error;
  }
}
