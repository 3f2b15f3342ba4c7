import { type Config, ConfigError, isLoopback } from '../config/settings';
import type { Logger } from '../logging';
import type { Exposure } from './protection';

/**
 * Who can reach a server bound to `config[hostKey]`. A server open to the network with
 * authentication off would let anyone who reaches the machine read and decide reviews: that
 * is refused unless the configuration says the risk is accepted.
 */
export function exposureOf(config: Config, hostKey: 'api_host' | 'dashboard_host'): Exposure {
  const loopbackOnly = isLoopback(config[hostKey]);
  const authenticated = config.enable_auth || config.edition === 'hosted';
  if (!loopbackOnly && !authenticated && !config.allow_unauthenticated_network) {
    throw new ConfigError(
      `${hostKey} is ${config[hostKey]}, which other machines can reach, and enable_auth is false: anyone on the network could read and decide reviews. ` +
        'Turn on enable_auth with an api_key, bind to 127.0.0.1, or accept the risk with allow_unauthenticated_network: true (--allow-unauthenticated-network)',
    );
  }
  return { loopbackOnly, authenticated, allowedHosts: config.allowed_hosts, publicUrl: config.public_url };
}

/**
 * Says, once a server listens, who can use it when it is open to the network without a key:
 * allow_unauthenticated_network accepts that risk, and the log is where it stays visible.
 */
export function warnIfOpenWithoutKey(exposure: Exposure, log: Logger, what: string, listening: { url: string; port: number }, reach: string): void {
  if (exposure.loopbackOnly || exposure.authenticated) return;
  log.warn(
    `${what} on ${listening.url} asks for no API key and is open to the network (allow_unauthenticated_network): ` +
      `anyone who can reach this machine on port ${listening.port} can ${reach}`,
  );
}
