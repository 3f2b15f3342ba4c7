import { type Config, type Edition, publicUrlOf } from '../config/settings';
import { type HttpEdition, hostedHttp, selfHostedHttp } from '../http/editions';
import type { HostedOptions } from '../http/hosted';
import type { Logger } from '../logging';

/**
 * What an edition runs. The configuration's `edition` is read here and nowhere else: the rest of
 * the server is handed the parts its edition has, or none.
 */
export interface EditionPlan {
  name: Edition;
  /** Organizations with their own keys, people, audit log, routing rules and approval workflows. */
  organizations: boolean;
  /** Whose webhook endpoints receive events: each organization's own, the `webhooks` setting's, or nobody's. */
  webhooks: 'organizations' | 'installation' | 'none';
}

export function editionOf(config: Config): EditionPlan {
  if (config.edition === 'hosted') return { name: 'hosted', organizations: true, webhooks: 'organizations' };
  // A self-hosted installation's organization_id is a label; the endpoints of its `webhooks` setting, if any, receive every event.
  return { name: 'self-hosted', organizations: false, webhooks: config.webhooks.length > 0 ? 'installation' : 'none' };
}

/** How the edition's API authenticates, who may call what, and the routes it adds. */
export function httpEditionOf(config: Config, hosted: Omit<HostedOptions, 'operatorKey' | 'secureCookies' | 'consoleUrl'>, options: { log: Logger; clock?: () => number }): HttpEdition {
  if (!editionOf(config).organizations) return selfHostedHttp(config.enable_auth ? config.api_key : undefined, options);
  return hostedHttp(
    {
      ...hosted,
      operatorKey: config.operator_key,
      secureCookies: publicUrlOf(config).startsWith('https:'),
      consoleUrl: publicUrlOf(config),
    },
    options,
  );
}
