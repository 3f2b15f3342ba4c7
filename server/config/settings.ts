/**
 * Every configuration key Greenlight understands: its type, default, the one-line comment
 * `greenlight init` writes above it, and how a raw value (YAML, environment or flag) is
 * checked. Reading and layering the sources lives in `load.ts`.
 */

import net from 'node:net';
import type { ConfiguredWebhook } from '../domain/webhooks/records';
import { compilePolicy, durationSeconds, NO_POLICY, type Policy } from '../domain/routing/review-policy';
import { checkUrl } from '../domain/webhooks/targets';
import { WEBHOOK_EVENTS } from '../domain/webhooks/webhooks';
import { RuleError } from '../domain/routing/conditions';

export const EDITIONS = ['self-hosted', 'hosted'] as const;
export type Edition = (typeof EDITIONS)[number];

export interface Config {
  /** Self-hosted: one installation, one optional key. Hosted: organizations, each with its own API keys. */
  edition: Edition;
  /** Hosted: the credential that may create organizations. */
  operator_key: string;
  api_host: string;
  api_port: number;
  dashboard_host: string;
  dashboard_port: number;
  /** Where the dashboard server sends `/api/*`; empty means this machine's own API. */
  api_url: string;
  /** The dashboard's address as people reach it (reviews' `links.dashboard`, invitation links; https makes cookies Secure). */
  public_url: string;
  /** Absolute path; relative paths are resolved when the config is loaded. */
  data_dir: string;
  /** `sqlite:<absolute path>` or `postgres://…` once loaded (empty in a file means the SQLite file `greenlight.db` inside `data_dir`). */
  database_url: string;
  /** PostgreSQL: the most pooled connections this process opens to the database. */
  database_pool_size: number;
  blocking_timeout_seconds: number;
  enable_auth: boolean;
  /** The shared secret agents and reviewers send as `Authorization: Bearer <api_key>`. */
  api_key: string;
  max_attachment_bytes: number;
  max_attachments_per_review: number;
  /** Blocking creates, long-polls and MCP waits held at once; past it new ones get 503 with Retry-After. */
  max_waiting_requests: number;
  /** Requests per minute per API key (per client address without authentication); 0 is no limit. */
  rate_limit_per_minute: number;
  /** The review policy (routing rules, default reviewers, expiry), validated and compiled. */
  routing: Policy;
  /** Start on a non-loopback address with authentication off, which is refused otherwise. */
  allow_unauthenticated_network: boolean;
  /** Host names, besides this machine's own, that a server open to the network without a key answers to. */
  allowed_hosts: string[];
  /** Peers whose `X-Forwarded-For` names the client (addresses, CIDR ranges, or loopback, linklocal, uniquelocal). */
  trusted_proxies: string[];
  /** Refuse (400) reviews and attachments whose text holds control, bidi, zero-width or other hidden characters. */
  refuse_hidden_characters: boolean;
  /** Seconds to wait before each retry of a failed webhook delivery; past the last, the endpoint is disabled. */
  webhook_retry_schedule: number[];
  /** Deliver webhooks to loopback, private and link-local addresses too (off: the SSRF guard refuses them). */
  webhook_allow_private_targets: boolean;
  /** Accept http:// webhook URLs as well as https://. */
  webhook_allow_http: boolean;
  /** Slack's Web API base (tests point it at a fake on loopback). */
  slack_api_url: string;
  /** The bot token (`xoxb-…`) reviews are posted with (self-hosted and desktop: from the app made by `greenlight slack manifest`). */
  slack_bot_token: string;
  /** The Slack channel id (C…) every new review is posted to; empty: none. */
  slack_channel: string;
  /** The app-level token (`xapp-…`) that opens Slack's Socket Mode: clicks arrive without a public URL. */
  slack_app_token: string;
  /** Hosted edition: the Slack app's client id and secret (Basic Information → App Credentials), for OAuth installs. */
  slack_client_id: string;
  slack_client_secret: string;
  /** Where installers are sent to authorize the app (tests point it at a fake). */
  slack_oauth_url: string;
  /** Hosted edition: base64 of 32 random bytes; installed bot tokens are stored encrypted with it (AES-256-GCM). */
  slack_token_key: string;
  /** Slack's signing secret: interactions and events arriving over HTTP are checked against it. */
  slack_signing_secret: string;
  /** Self-hosted edition: webhook endpoints that receive every event of the installation. */
  webhooks: ConfiguredWebhook[];
  /** Webhook deliveries one API process sends at once (each holds a socket until answered or timed out). */
  webhook_max_in_flight: number;
  /** Of those, at most this many for one organization, so its slow endpoints cannot take every slot. */
  webhook_max_in_flight_per_organization: number;
  /** Hosted edition: webhook endpoints one organization may have; one more gets 409. */
  max_webhooks_per_organization: number;
  /** How long a decision's receipt is valid after the decision (its `exp`). */
  receipt_ttl_seconds: number;
  /** The secret the receipt signing keys are encrypted under in the database; empty: a random one kept in data_dir. */
  receipt_key_encryption_key: string;
}

export type ConfigKey = keyof Config;

/** Where a raw value came from, so an error can point at it. */
export interface ValueOrigin {
  /** e.g. `greenlight.yaml`, `GREENLIGHT_API_PORT`, `--port` */
  source: string;
  /** Environment variables and flags are text; YAML values carry their own type. */
  isText: boolean;
}

export class ConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ConfigError';
  }
}

interface Setting<K extends ConfigKey> {
  key: K;
  comment: string;
  defaultValue: Config[K];
  parse(raw: unknown, origin: ValueOrigin): Config[K];
}

function describe(raw: unknown): string {
  return typeof raw === 'string' ? JSON.stringify(raw) : String(raw);
}

function invalid(key: ConfigKey, expectation: string, raw: unknown, origin: ValueOrigin): ConfigError {
  return new ConfigError(`${key} must be ${expectation} (got ${describe(raw)} from ${origin.source})`);
}

function integerIn(min: number, max: number) {
  return (key: ConfigKey) =>
    (raw: unknown, origin: ValueOrigin): number => {
      const value = origin.isText && typeof raw === 'string' && /^-?\d+$/.test(raw.trim()) ? Number(raw) : raw;
      if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
        throw invalid(key, `an integer from ${min} to ${max}`, raw, origin);
      }
      return value;
    };
}

function text(options: { allowEmpty: boolean }) {
  return (key: ConfigKey) =>
    (raw: unknown, origin: ValueOrigin): string => {
      if (raw === null && options.allowEmpty) return '';
      if (typeof raw !== 'string' || (!options.allowEmpty && raw.trim() === '')) {
        throw invalid(key, options.allowEmpty ? 'a string' : 'a non-empty string', raw, origin);
      }
      return raw.trim();
    };
}

const port = integerIn(1, 65535);

function oneOf<T extends string>(choices: readonly T[]) {
  return (key: ConfigKey) =>
    (raw: unknown, origin: ValueOrigin): T => {
      if (typeof raw !== 'string' || !choices.includes(raw.trim() as T)) throw invalid(key, `one of ${choices.join(', ')}`, raw, origin);
      return raw.trim() as T;
    };
}

function url(key: ConfigKey) {
  return (raw: unknown, origin: ValueOrigin): string => {
    const value = text({ allowEmpty: true })(key)(raw, origin);
    if (value === '') return value;
    let parsed: URL;
    try {
      parsed = new URL(value);
    } catch {
      throw invalid(key, 'an http:// or https:// URL', raw, origin);
    }
    if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw invalid(key, 'an http:// or https:// URL', raw, origin);
    return value.replace(/\/+$/, '');
  };
}

const TRUE_WORDS = new Set(['true', 'yes', 'on', '1']);
const FALSE_WORDS = new Set(['false', 'no', 'off', '0']);

function flag(key: ConfigKey) {
  return (raw: unknown, origin: ValueOrigin): boolean => {
    if (typeof raw === 'boolean') return raw;
    const word = origin.isText && typeof raw === 'string' ? raw.trim().toLowerCase() : undefined;
    if (word !== undefined && TRUE_WORDS.has(word)) return true;
    if (word !== undefined && FALSE_WORDS.has(word)) return false;
    throw invalid(key, 'true or false', raw, origin);
  };
}

/** A list in the file; names separated by commas in an environment variable. */
function hostNames(key: ConfigKey) {
  return (raw: unknown, origin: ValueOrigin): string[] => {
    const items = origin.isText && typeof raw === 'string' ? raw.split(',').map((item) => item.trim()).filter(Boolean) : raw ?? [];
    if (!Array.isArray(items) || !items.every((item) => typeof item === 'string' && /^[a-z0-9.-]{1,253}$/i.test(item))) {
      throw invalid(key, 'a list of host names (letters, digits, dots and dashes)', raw, origin);
    }
    return items.map((item: string) => item.toLowerCase());
  };
}

/** Names Express's `trust proxy` understands for whole ranges. */
const NAMED_RANGES = new Set(['loopback', 'linklocal', 'uniquelocal']);

function isAddressRange(entry: string): boolean {
  if (NAMED_RANGES.has(entry)) return true;
  const [address, prefix, ...rest] = entry.split('/');
  const version = net.isIP(address);
  if (version === 0 || rest.length > 0) return false;
  return prefix === undefined || (/^\d{1,3}$/.test(prefix) && Number(prefix) <= (version === 4 ? 32 : 128));
}

/** A list in the file; entries separated by commas in an environment variable. */
function proxyRanges(key: ConfigKey) {
  return (raw: unknown, origin: ValueOrigin): string[] => {
    const items = origin.isText && typeof raw === 'string' ? raw.split(',').map((item) => item.trim()).filter(Boolean) : raw ?? [];
    const expectation = 'a list of IP addresses, CIDR ranges (10.0.0.0/8, fd00::/8) or loopback, linklocal, uniquelocal';
    if (!Array.isArray(items)) throw invalid(key, expectation, raw, origin);
    const wrong = items.find((item) => typeof item !== 'string' || !isAddressRange(item.trim().toLowerCase()));
    if (wrong !== undefined) throw invalid(key, expectation, wrong, origin);
    return items.map((item: string) => item.trim().toLowerCase());
  };
}

/** A list of durations in the file (`[5, "5m", "1h"]`); separated by commas in an environment variable. */
function durations(key: ConfigKey) {
  return (raw: unknown, origin: ValueOrigin): number[] => {
    const items = origin.isText && typeof raw === 'string' ? raw.split(',').map((item) => item.trim()).filter(Boolean) : raw;
    if (!Array.isArray(items) || items.length === 0 || items.length > 50) throw invalid(key, 'a list of 1 to 50 durations such as [5, "5m", "1h"]', raw, origin);
    try {
      return items.map((item, index) => durationSeconds(`${key}[${index}]`, origin.isText && /^\d+$/.test(String(item)) ? Number(item) : item));
    } catch (error) {
      if (error instanceof RuleError) throw new ConfigError(`${error.message} (in ${origin.source})`);
      throw error;
    }
  };
}

/** Empty, or a Slack token of the kind its prefix names. */
function slackToken(prefix: string) {
  return (key: ConfigKey) =>
    (raw: unknown, origin: ValueOrigin): string => {
      const value = text({ allowEmpty: true })(key)(raw, origin);
      if (value !== '' && !(value.startsWith(prefix) && /^[A-Za-z0-9-]{10,255}$/.test(value))) throw invalid(key, `a Slack token that starts with ${prefix}`, '(hidden)', origin);
      return value;
    };
}

/** Empty, or base64 of exactly 32 bytes (an AES-256 key). */
function slackTokenKey(key: ConfigKey) {
  return (raw: unknown, origin: ValueOrigin): string => {
    const value = text({ allowEmpty: true })(key)(raw, origin);
    if (value !== '' && (!/^[A-Za-z0-9+/]{43}=$/.test(value) || Buffer.from(value, 'base64').length !== 32)) throw invalid(key, 'the base64 of 32 random bytes (openssl rand -base64 32)', '(hidden)', origin);
    return value;
  };
}

/** Empty, or a Slack conversation id. */
function slackChannel(key: ConfigKey) {
  return (raw: unknown, origin: ValueOrigin): string => {
    const value = text({ allowEmpty: true })(key)(raw, origin);
    if (value !== '' && !/^[CGD][A-Z0-9]{2,40}$/.test(value)) throw invalid(key, 'a Slack channel id such as C0123456789 (Channel details → About, at the bottom)', raw, origin);
    return value;
  };
}

/** A list of `{url, secret, events?}` in the file; JSON in an environment variable. */
function configuredWebhooks(key: ConfigKey) {
  return (raw: unknown, origin: ValueOrigin): ConfiguredWebhook[] => {
    let value = raw;
    if (origin.isText && typeof raw === 'string') {
      try {
        value = JSON.parse(raw);
      } catch {
        throw invalid(key, 'a JSON list in an environment variable', raw, origin);
      }
    }
    if (!Array.isArray(value)) throw invalid(key, 'a list of {url, secret, events}', raw, origin);
    return value.map((item: unknown, index: number) => {
      const where = `${key}[${index}]`;
      const entry = (typeof item === 'object' && item !== null ? item : {}) as Record<string, unknown>;
      const unknown = Object.keys(entry).find((name) => !['url', 'secret', 'events'].includes(name));
      if (unknown) throw new ConfigError(`${where}: unknown key '${unknown}' (an endpoint has url, secret and events; in ${origin.source})`);
      if (typeof entry.url !== 'string' || !/^https?:\/\//.test(entry.url)) throw new ConfigError(`${where}.url must be an http:// or https:// URL (in ${origin.source})`);
      if (typeof entry.secret !== 'string' || !/^whsec_[A-Za-z0-9+/]{32,}={0,2}$/.test(entry.secret)) {
        throw new ConfigError(`${where}.secret must be whsec_ and the base64 of at least 24 random bytes, e.g. whsec_$(openssl rand -base64 32) (in ${origin.source})`);
      }
      const events = entry.events ?? [...WEBHOOK_EVENTS];
      if (!Array.isArray(events) || events.length === 0 || !events.every((type) => (WEBHOOK_EVENTS as readonly unknown[]).includes(type))) {
        throw new ConfigError(`${where}.events must be a list of ${WEBHOOK_EVENTS.join(', ')} (in ${origin.source})`);
      }
      return { url: entry.url, secret: entry.secret, events: [...new Set(events as string[])] };
    });
  };
}

/** A mapping in the file; JSON in an environment variable. */
function policy(key: ConfigKey) {
  return (raw: unknown, origin: ValueOrigin): Policy => {
    let value = raw;
    if (origin.isText && typeof raw === 'string') {
      try {
        value = JSON.parse(raw);
      } catch {
        throw invalid(key, 'a JSON object in an environment variable', raw, origin);
      }
    }
    try {
      return compilePolicy(value);
    } catch (error) {
      if (error instanceof RuleError) throw new ConfigError(`${key}: ${error.message} (in ${origin.source})`);
      throw error;
    }
  };
}

function setting<K extends ConfigKey>(
  key: K,
  defaultValue: Config[K],
  comment: string,
  parser: (key: ConfigKey) => (raw: unknown, origin: ValueOrigin) => Config[K],
): Setting<K> {
  return { key, defaultValue, comment, parse: parser(key) };
}

export const SETTINGS = [
  setting('edition', 'self-hosted', 'self-hosted (one installation; optional api_key) or hosted (organizations with their own API keys; see the README).', oneOf(EDITIONS)),
  setting('operator_key', '', 'Hosted edition: the key that may create organizations (at least 32 characters). Prefer GREENLIGHT_OPERATOR_KEY.', text({ allowEmpty: true })),
  setting('api_host', '127.0.0.1', 'Interface the API binds to. Keep 127.0.0.1 unless other machines must reach it.', text({ allowEmpty: false })),
  setting('api_port', 8000, 'TCP port of the HTTP API.', port),
  setting('dashboard_host', '127.0.0.1', 'Interface the reviewer dashboard binds to.', text({ allowEmpty: false })),
  setting('dashboard_port', 8501, 'TCP port of the reviewer dashboard.', port),
  setting('api_url', '', 'API the dashboard talks to (its /api/* is forwarded there). Empty: http://<api_host>:<api_port>.', url),
  setting(
    'public_url',
    '',
    'The dashboard\'s address as people reach it, e.g. https://review.example.com: each review\'s links.dashboard and (hosted edition) invitation links point there, and https:// marks session cookies Secure. Empty: http://<dashboard_host>:<dashboard_port>, and in the hosted edition reviews carry no links.',
    url,
  ),
  setting('data_dir', './greenlight-data', 'Directory for the database and uploaded files (relative to this file).', text({ allowEmpty: false })),
  setting(
    'database_url',
    '',
    'Empty: the SQLite file greenlight.db inside data_dir. Or sqlite:<path to a .db file>, or postgres://user:password@host:5432/database (prefer GREENLIGHT_DATABASE_URL for a password).',
    text({ allowEmpty: true }),
  ),
  setting(
    'database_pool_size',
    10,
    'PostgreSQL: most connections each API process keeps to the database, plus one it listens on; N processes need N × (this + 1) of the server\'s max_connections. Ignored on SQLite.',
    integerIn(1, 1_000),
  ),
  setting('blocking_timeout_seconds', 300, 'Longest a blocking POST /reviews waits for a decision before answering 408.', integerIn(1, 86_400)),
  setting('enable_auth', false, 'Require Authorization: Bearer <api_key> on every endpoint except /health and the API docs.', flag),
  setting('api_key', '', 'The API key (at least 16 characters; e.g. the output of: openssl rand -hex 32). Prefer GREENLIGHT_API_KEY to keep it out of files.', text({ allowEmpty: true })),
  setting('max_attachment_bytes', 25 * 1024 * 1024, 'Largest attachment accepted, in bytes (25 MiB); larger uploads get 413.', integerIn(1, 2 ** 40)),
  setting('max_attachments_per_review', 20, 'Most attachments one review may hold; an upload past it gets 409, a review filed with more files 413.', integerIn(1, 10_000)),
  setting('max_waiting_requests', 10_000, 'Most blocking creates, long-polls and MCP waits held open at once; more get 503 with Retry-After (MCP tools answer pending).', integerIn(1, 1_000_000)),
  setting('rate_limit_per_minute', 0, 'Requests per minute per API key (per client address without auth), 429 past it; 0: no limit.', integerIn(0, 1_000_000)),
  setting(
    'allow_unauthenticated_network',
    false,
    'Let the API or dashboard listen on a non-loopback address with enable_auth false: anyone who can reach this machine could read and decide reviews. Refused unless true.',
    flag,
  ),
  setting('allowed_hosts', [], 'Host names (besides this machine\'s own) that a server open to the network without a key answers to, e.g. [greenlight.lan]; others get 403.', hostNames),
  // Loopback by default: the dashboard server that greenlight start runs reaches the API over it, and
  // the API's limits must count each browser behind it, not the dashboard. The cost: a process on
  // this machine may claim any address, spreading its own guesses over many counts or spending
  // another client's. It could reach the API directly anyway, and where other users' processes are
  // not to be believed, [] or a remote proxy's own address turns it off.
  setting(
    'trusted_proxies',
    ['loopback'],
    'Proxies and load balancers whose X-Forwarded-For is believed, as addresses or CIDR ranges, e.g. [loopback, 10.0.0.0/8]: the client is the rightmost address not among them, and the limits on failed sign-ins, wrong keys and requests count per client. loopback covers the dashboard server on this machine; [] believes no one.',
    proxyRanges,
  ),
  setting(
    'refuse_hidden_characters',
    false,
    'Refuse (400) reviews whose task_type, proposed_action, agent_reasoning, framework or metadata, and attachments whose file name or description, hold control, bidirectional, zero-width or other invisible characters. Off: they are stored, and the dashboard shows them marked.',
    flag,
  ),
  setting(
    'webhook_retry_schedule',
    [5, 300, 1_800, 7_200, 18_000, 36_000, 50_400, 72_000, 86_400],
    'Hosted edition: the waits before each retry of a failed webhook delivery (5s, 5m, 30m, 2h, 5h, 10h, 14h, 20h, 24h), each within ±10 %; after the last failure the endpoint is disabled.',
    durations,
  ),
  setting('webhook_allow_private_targets', false, 'Deliver webhooks to loopback, private, link-local and cloud-metadata addresses too (the SSRF guard refuses them otherwise).', flag),
  setting('webhook_allow_http', false, 'Accept http:// webhook URLs; otherwise only https://.', flag),
  setting(
    'webhooks',
    [],
    'Self-hosted edition: endpoints that receive every event, signed (Standard Webhooks) and retried, e.g. [{url: "https://hooks.example.com/greenlight", secret: "whsec_<base64 of 32 random bytes>", events: [review.decided]}]; events default to all.',
    configuredWebhooks,
  ),
  setting(
    'webhook_max_in_flight',
    32,
    'Webhook deliveries one API process sends at once; more wait their turn. Each holds an open file until answered (15 s at most), counted against the open-file limit.',
    integerIn(1, 10_000),
  ),
  setting(
    'webhook_max_in_flight_per_organization',
    8,
    'Of webhook_max_in_flight, the most one organization\'s endpoints may hold, so that endpoints which never answer cannot hold up everyone else\'s.',
    integerIn(1, 10_000),
  ),
  setting('slack_api_url', 'https://slack.com/api', "Slack's Web API base URL; change it only to point at a test double.", url),
  setting('slack_bot_token', '', 'Slack bot token (xoxb-…) that posts reviews and updates them; prefer GREENLIGHT_SLACK_BOT_TOKEN. Empty: nothing is posted to Slack.', slackToken('xoxb-')),
  setting(
    'slack_app_token',
    '',
    'Slack app-level token (xapp-…, scope connections:write) for Socket Mode: clicks in Slack reach this server over a connection it opens, so no public URL is needed. Prefer GREENLIGHT_SLACK_APP_TOKEN.',
    slackToken('xapp-'),
  ),
  setting('slack_channel', '', 'Slack channel id (C…, G…) each new review is posted to, with slack_bot_token; empty: none.', slackChannel),
  setting(
    'slack_signing_secret',
    '',
    "Your Slack app's signing secret (Basic Information → App Credentials); POST /integrations/slack/interactions and /events refuse what it did not sign. Prefer GREENLIGHT_SLACK_SIGNING_SECRET.",
    text({ allowEmpty: true }),
  ),
  setting('slack_client_id', '', 'Hosted edition: the Slack app\'s Client ID, for "Add to Slack" (OAuth v2). Empty: organizations cannot install Slack.', text({ allowEmpty: true })),
  setting('slack_client_secret', '', 'Hosted edition: the Slack app\'s Client Secret, sent to Slack as HTTP Basic when an install completes. Prefer GREENLIGHT_SLACK_CLIENT_SECRET.', text({ allowEmpty: true })),
  setting('slack_oauth_url', 'https://slack.com/oauth/v2/authorize', 'Where installers authorize the Slack app; change it only to point at a test double.', url),
  setting(
    'slack_token_key',
    '',
    'Hosted edition: the key installed Slack bot tokens are encrypted with at rest (AES-256-GCM): base64 of 32 random bytes, e.g. openssl rand -base64 32. Prefer GREENLIGHT_SLACK_TOKEN_KEY; losing it means installing Slack again.',
    slackTokenKey,
  ),
  setting('max_webhooks_per_organization', 50, 'Hosted edition: webhook endpoints one organization may have; creating one more gets 409.', integerIn(1, 100_000)),
  setting(
    'receipt_ttl_seconds',
    600,
    'How long a decision\'s signed receipt is valid after the decision was made (its exp): an executor refuses to run the action on an older one.',
    integerIn(1, 30 * 86_400),
  ),
  setting(
    'receipt_key_encryption_key',
    '',
    'The secret the receipt signing keys are encrypted under in the database (at least 32 characters, e.g. openssl rand -base64 32; prefer GREENLIGHT_RECEIPT_KEY_ENCRYPTION_KEY). Empty: a random one made at first start in data_dir/receipt-key-encryption.key. Every API process on one PostgreSQL database needs the same.',
    text({ allowEmpty: true }),
  ),
  setting('routing', NO_POLICY, 'Review policy: routing rules, default reviewers and expiry (see the README). Reloaded on SIGHUP or greenlight reload.', policy),
] as const;

export const MIN_API_KEY_LENGTH = 16;
export const MIN_OPERATOR_KEY_LENGTH = 32;

/** Rules that span settings, checked once every source has been applied. */
export function checkConsistency(config: Config): void {
  if (config.enable_auth && config.api_key === '') {
    throw new ConfigError('enable_auth is true but api_key is empty; set api_key in the config file or GREENLIGHT_API_KEY');
  }
  if (config.api_key !== '' && config.api_key.length < MIN_API_KEY_LENGTH) {
    throw new ConfigError(`api_key must be at least ${MIN_API_KEY_LENGTH} characters (try: openssl rand -hex 32)`);
  }
  if (config.operator_key !== '' && config.operator_key.length < MIN_OPERATOR_KEY_LENGTH) {
    throw new ConfigError(`operator_key must be at least ${MIN_OPERATOR_KEY_LENGTH} characters (try: openssl rand -hex 32)`);
  }
  if (config.receipt_key_encryption_key !== '' && config.receipt_key_encryption_key.length < MIN_OPERATOR_KEY_LENGTH) {
    throw new ConfigError(`receipt_key_encryption_key must be at least ${MIN_OPERATOR_KEY_LENGTH} characters (try: openssl rand -base64 32)`);
  }
  if (config.edition === 'hosted' && config.webhooks.length > 0) {
    throw new ConfigError("webhooks belongs to the self-hosted edition: in the hosted edition each organization adds its own with POST /webhooks");
  }
  for (const [index, webhook] of config.webhooks.entries()) {
    const problem = checkUrl(webhook.url, { allowHttp: config.webhook_allow_http, allowPrivate: config.webhook_allow_private_targets });
    if (problem) throw new ConfigError(`webhooks[${index}].url ${problem}${webhook.url.startsWith('http:') ? ' (or set webhook_allow_http: true)' : ''}`);
  }
  if (config.edition === 'hosted' && config.enable_auth) {
    throw new ConfigError('enable_auth belongs to the self-hosted edition: the hosted edition always requires an organization\'s API key');
  }
}

export function defaultConfig(): Config {
  return Object.fromEntries(SETTINGS.map((s) => [s.key, s.defaultValue])) as unknown as Config;
}

export function findSetting(key: string): (typeof SETTINGS)[number] | undefined {
  return SETTINGS.find((s) => s.key === key);
}

/** `api_port` → `GREENLIGHT_API_PORT` */
export function environmentName(key: ConfigKey): string {
  return `GREENLIGHT_${key.toUpperCase()}`;
}

/** Whether a host name or address (URL brackets allowed) means this machine only. */
export function isLoopback(host: string): boolean {
  const bare = host.replace(/^\[(.*)\]$/, '$1');
  return bare === 'localhost' || bare === '::1' || /^127\.\d+\.\d+\.\d+$/.test(bare);
}

/** How a client on this machine reaches an interface (a wildcard address means any of them). */
function reachableHost(host: string): string {
  const local = host === '0.0.0.0' ? '127.0.0.1' : host === '::' ? '::1' : host;
  return local.includes(':') ? `[${local}]` : local;
}

/** The API as this machine reaches it: `api_url` when set, else the local `api_host:api_port`. */
export function apiUrlOf(config: Pick<Config, 'api_url' | 'api_host' | 'api_port'>): string {
  return config.api_url || `http://${reachableHost(config.api_host)}:${config.api_port}`;
}

export function dashboardUrlOf(config: Pick<Config, 'dashboard_host' | 'dashboard_port'>): string {
  return `http://${reachableHost(config.dashboard_host)}:${config.dashboard_port}`;
}

/**
 * The dashboard address a review's `links.dashboard` points into, where it is known: `public_url`
 * when set; in the self-hosted edition without it, this machine's dashboard address (where
 * `greenlight start` and the desktop app serve it). The hosted edition without `public_url` has
 * none: its machine's own address is not where an organization's people reach it.
 */
export function reviewLinkBaseOf(config: Pick<Config, 'edition' | 'public_url' | 'dashboard_host' | 'dashboard_port'>): string | null {
  if (config.public_url) return config.public_url;
  return config.edition === 'self-hosted' ? dashboardUrlOf(config) : null;
}

/** The dashboard as people reach it: `public_url` when set, else this machine's dashboard address. */
export function publicUrlOf(config: Pick<Config, 'public_url' | 'dashboard_host' | 'dashboard_port'>): string {
  return config.public_url || dashboardUrlOf(config);
}
