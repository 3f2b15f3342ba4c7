import type { RequestHandler, Router } from 'express';
import type { Logger } from '../logging';
import { installationKey, requireBearerKey } from './auth';
import { type HostedOptions, hostedAccess, hostedAuthentication, hostedMcpAccess } from './hosted';
import { agentRoutes } from './routes/agents';
import { auditRoutes } from './routes/audit';
import { organizationRoutes } from './routes/organizations';
import { peopleRoutes } from './routes/people';
import { routingRuleRoutes } from './routes/routing-rules';
import { sessionRoutes } from './routes/sessions';
import { webhookRoutes } from './routes/webhooks';
import { slackInstallRoutes } from './routes/slack-install';
import { workflowRoutes } from './routes/workflows';
import { evalRoutes } from './routes/evals';

/** What the HTTP API of an edition adds to the core routes every edition serves. */
export interface HttpEdition {
  name: 'self-hosted' | 'hosted';
  /** Who is calling, established before any route runs. */
  authentication: RequestHandler[];
  /** Who may open MCP sessions at `/mcp`, which the OpenAPI validator does not see. */
  mcpAccess: RequestHandler[];
  /** Who may call an operation, once the OpenAPI validator has matched the request to it. */
  operationAccess: RequestHandler[];
  /** The edition's own resources. */
  routes: Router[];
}

interface LimitsOptions {
  log: Logger;
  /** The wrong-key limit's notion of now (tests set it). */
  clock?: () => number;
}

/** One installation: anyone on this machine, or whoever has its one key (`enable_auth`). */
export function selfHostedHttp(apiKey: string | undefined, { log, clock }: LimitsOptions): HttpEdition {
  return {
    name: 'self-hosted',
    authentication: apiKey ? [requireBearerKey(installationKey(apiKey), log, clock)] : [],
    mcpAccess: [],
    operationAccess: [],
    routes: [],
  };
}

/** Organizations: their API keys and people's sessions, the roles each operation allows, and their resources. */
export function hostedHttp(hosted: HostedOptions, { log, clock }: LimitsOptions): HttpEdition {
  return {
    name: 'hosted',
    authentication: [hostedAuthentication(hosted, log, clock)],
    mcpAccess: [hostedMcpAccess()],
    operationAccess: [hostedAccess()],
    routes: [
      sessionRoutes(hosted.signIn, hosted.secureCookies, clock),
      organizationRoutes(hosted.organizations),
      agentRoutes(hosted.agents),
      peopleRoutes(hosted.people),
      routingRuleRoutes(hosted.routing),
      workflowRoutes(hosted.workflows),
      evalRoutes(hosted.evaluations),
      webhookRoutes(hosted.webhooks),
      slackInstallRoutes(hosted.chatInstallations, hosted.consoleUrl),
      auditRoutes(hosted.audit),
    ],
  };
}
