import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { WebSocket, WebSocketServer } from 'ws';
import type { Config } from '../../server/config/settings';

/**
 * A fake Slack on loopback speaking the real protocol, for tests: the Web API methods Greenlight
 * calls (form or JSON bodies, Bearer or Basic auth, `{ok, error}` answers, 429 with
 * `Retry-After`), and a Socket Mode WebSocket (`hello`, envelopes, `retry_attempt`,
 * `disconnect`). It records every call. Facts from Slack's documentation: see
 * ../shared/design/slack-protocol.md.
 */

export interface SlackCall {
  method: string;
  args: Record<string, unknown>;
  /** The `Authorization` header as sent. */
  authorization: string | undefined;
}

export interface FakeMessage {
  channel: string;
  ts: string;
  text: string;
  blocks: Array<Record<string, any>>;
  /** How many times `chat.update` rewrote it. */
  updates: number;
}

export interface FakeSlackUser {
  email?: string;
  deleted?: boolean;
  team_id?: string;
}

export interface SocketConnection {
  /** Its number, in the order connections opened (from 1). */
  number: number;
  socket: WebSocket;
  /** The envelope ids it acknowledged, in order, with any payload. */
  acks: Array<{ envelope_id: string; payload?: unknown }>;
  closed: boolean;
}

export interface FakeSlackOptions {
  botToken?: string;
  appToken?: string;
  clientId?: string;
  clientSecret?: string;
  /** The code `oauth.v2.access` accepts, once. */
  oauthCode?: string;
}

function readBody(request: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    request.on('error', reject);
  });
}

/** Slack's Web API takes form bodies (objects as JSON strings) and JSON bodies alike. */
function argsOf(contentType: string | undefined, body: string): Record<string, unknown> {
  if (contentType?.startsWith('application/json')) return body ? (JSON.parse(body) as Record<string, unknown>) : {};
  const args: Record<string, unknown> = {};
  for (const [name, value] of new URLSearchParams(body)) {
    args[name] = /^[[{]/.test(value) ? JSON.parse(value) : value;
  }
  return args;
}

function same(a: string, b: string): boolean {
  const left = createHash('sha256').update(a).digest();
  const right = createHash('sha256').update(b).digest();
  return timingSafeEqual(left, right);
}

export class FakeSlack {
  readonly calls: SlackCall[] = [];
  readonly messages: FakeMessage[] = [];
  readonly users = new Map<string, FakeSlackUser>();
  readonly connections: SocketConnection[] = [];
  /** Tokens `auth.revoke` revoked: calls with them answer `token_revoked`. */
  readonly revoked = new Set<string>();
  readonly options: Required<FakeSlackOptions>;
  /** Socket Mode connections opening and closing, in order: `open 1`, `close 1`… */
  readonly socketLog: string[] = [];
  /** Requests cut off while down. */
  refused = 0;
  private down = false;
  private readonly limited = new Map<string, { times: number; retryAfterSeconds: number }>();
  private readonly sockets = new Set<Socket>();
  private nextTs = 1_700_000_000_000_100;
  private readonly wss = new WebSocketServer({ noServer: true });
  private tickets = 0;
  /** Bot tokens `oauth.v2.access` issued, one per install, each valid until revoked. */
  readonly issuedTokens: string[] = [];
  /** Codes `oauth.v2.access` takes, each once (the options' code to begin with). */
  readonly oauthCodes = new Set<string>();

  private constructor(
    private readonly server: http.Server,
    options: FakeSlackOptions,
  ) {
    this.options = {
      botToken: 'xoxb-test-bot-token',
      appToken: 'xapp-1-test-app-token',
      clientId: '1234.5678',
      clientSecret: 'fake-client-secret',
      oauthCode: 'fake-oauth-code',
      ...options,
    };
    this.oauthCodes.add(this.options.oauthCode);
  }

  static async start(options: FakeSlackOptions = {}): Promise<FakeSlack> {
    const server = http.createServer();
    const slack = new FakeSlack(server, options);
    server.on('request', (request, response) => void slack.handle(request, response));
    server.on('connection', (socket) => {
      slack.sockets.add(socket);
      socket.on('close', () => slack.sockets.delete(socket));
    });
    server.on('upgrade', (request, socket, head) => slack.upgrade(request, socket as Socket, head));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return slack;
  }

  /** The Web API's base, as the `slack_api_url` setting takes it. */
  get apiUrl(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/api`;
  }

  /** Slack's authorize page, as the `slack_oauth_url` setting takes it: it authorizes at once. */
  get authorizeUrl(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/oauth/v2/authorize`;
  }

  /** Down: every request's connection is cut without an answer, as when Slack cannot be reached. */
  setDown(down: boolean): void {
    this.down = down;
  }

  /** The next `times` calls of `method` answer 429 with `Retry-After: retryAfterSeconds`. */
  rateLimit(method: string, times: number, retryAfterSeconds: number): void {
    this.limited.set(method, { times, retryAfterSeconds });
  }

  callsOf(method: string): SlackCall[] {
    return this.calls.filter((call) => call.method === method);
  }

  /** Closes the Web API and every socket. */
  async stop(): Promise<void> {
    for (const connection of this.connections) connection.socket.terminate();
    this.wss.close();
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  // ── Socket Mode ──────────────────────────────────────────────────────────────────────────

  /** Sends an envelope on `connection` (the newest open one by default); resolves with its ack. */
  async sendEnvelope(
    type: 'interactive' | 'events_api' | 'slash_commands',
    payload: unknown,
    { envelopeId = `env-${Math.random().toString(36).slice(2)}`, retryAttempt = 0, connection = this.openConnection() } = {},
  ): Promise<{ envelope_id: string; payload?: unknown }> {
    if (!connection) throw new Error('no Socket Mode connection is open');
    const acked = new Promise<{ envelope_id: string; payload?: unknown }>((resolve) => {
      const onMessage = (data: Buffer) => {
        const ack = JSON.parse(data.toString('utf8')) as { envelope_id?: string; payload?: unknown };
        if (ack.envelope_id === envelopeId) {
          connection.socket.off('message', onMessage);
          resolve({ envelope_id: envelopeId, payload: ack.payload });
        }
      };
      connection.socket.on('message', onMessage);
    });
    connection.socket.send(JSON.stringify({ envelope_id: envelopeId, type, payload, accepts_response_payload: type !== 'events_api', retry_attempt: retryAttempt, retry_reason: retryAttempt > 0 ? 'timeout' : '' }));
    return acked;
  }

  /** Tells a connection to go (`refresh_requested`, as Slack does every few hours). */
  disconnect(connection = this.openConnection(), reason = 'refresh_requested'): void {
    if (!connection) throw new Error('no Socket Mode connection is open');
    connection.socket.send(JSON.stringify({ type: 'disconnect', reason, debug_info: { host: 'fake-slack' } }));
  }

  /** The newest connection still open. */
  openConnection(): SocketConnection | undefined {
    return [...this.connections].reverse().find((connection) => !connection.closed);
  }

  private upgrade(request: IncomingMessage, socket: Socket, head: Buffer): void {
    const url = new URL(request.url ?? '/', 'http://fake');
    if (url.pathname !== '/link' || !url.searchParams.get('ticket')) {
      socket.destroy();
      return;
    }
    this.wss.handleUpgrade(request, socket, head, (ws) => {
      const connection: SocketConnection = { number: this.connections.length + 1, socket: ws, acks: [], closed: false };
      this.connections.push(connection);
      this.socketLog.push(`open ${connection.number}`);
      ws.on('message', (data: Buffer) => {
        const message = JSON.parse(data.toString('utf8')) as { envelope_id?: string; payload?: unknown };
        if (message.envelope_id) connection.acks.push({ envelope_id: message.envelope_id, payload: message.payload });
      });
      ws.on('close', () => {
        connection.closed = true;
        this.socketLog.push(`close ${connection.number}`);
      });
      ws.send(JSON.stringify({ type: 'hello', num_connections: this.connections.filter((c) => !c.closed).length, connection_info: { app_id: 'A0FAKE' }, debug_info: { host: 'fake-slack', approximate_connection_time: 18060 } }));
    });
  }

  // ── Web API ──────────────────────────────────────────────────────────────────────────────

  private async handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const url = new URL(request.url ?? '/', 'http://fake');
    if (request.method === 'GET' && url.pathname === '/oauth/v2/authorize') {
      // The installer authorizes at once: Slack sends them back with a new code and the state.
      const code = `code-${this.oauthCodes.size + this.issuedTokens.length + 1}-${Math.random().toString(36).slice(2)}`;
      this.oauthCodes.add(code);
      const back = new URL(url.searchParams.get('redirect_uri') ?? '');
      back.searchParams.set('code', code);
      back.searchParams.set('state', url.searchParams.get('state') ?? '');
      response.writeHead(302, { location: back.toString() }).end();
      return;
    }
    if (this.down) {
      this.refused += 1;
      request.socket.destroy();
      return;
    }
    const body = await readBody(request);
    const method = (request.url ?? '').replace(/^\/api\//, '').split('?')[0];
    const args = argsOf(request.headers['content-type'], body);
    this.calls.push({ method, args, authorization: request.headers.authorization });
    const limit = this.limited.get(method);
    if (limit && limit.times > 0) {
      limit.times -= 1;
      response.writeHead(429, { 'retry-after': String(limit.retryAfterSeconds), 'content-type': 'application/json' });
      response.end(JSON.stringify({ ok: false, error: 'ratelimited' }));
      return;
    }
    const answer = this.answer(method, args, request.headers.authorization);
    response.writeHead(200, { 'content-type': 'application/json; charset=utf-8' });
    response.end(JSON.stringify(answer));
  }

  private answer(method: string, args: Record<string, any>, authorization: string | undefined): Record<string, unknown> {
    if (method === 'oauth.v2.access') return this.oauthAccess(args, authorization);
    const token = authorization?.startsWith('Bearer ') ? authorization.slice(7) : (args.token as string | undefined);
    if (!token) return { ok: false, error: 'not_authed' };
    if (this.revoked.has(token)) return { ok: false, error: 'token_revoked' };
    if (method === 'apps.connections.open') {
      if (!same(token, this.options.appToken)) return { ok: false, error: 'invalid_auth' };
      return { ok: true, url: `ws://127.0.0.1:${(this.server.address() as AddressInfo).port}/link?ticket=${++this.tickets}` };
    }
    if (!same(token, this.options.botToken) && !this.issuedTokens.some((issued) => same(token, issued))) return { ok: false, error: 'invalid_auth' };
    switch (method) {
      case 'auth.test':
        return { ok: true, url: 'https://fake.slack.com/', team: 'Fake Team', team_id: 'T0FAKE', user: 'greenlight', user_id: 'U0BOT', bot_id: 'B0BOT' };
      case 'auth.revoke':
        this.revoked.add(token);
        return { ok: true, revoked: true };
      case 'chat.postMessage': {
        if (!args.channel) return { ok: false, error: 'channel_not_found' };
        const ts = this.newTs();
        const message: FakeMessage = { channel: String(args.channel), ts, text: String(args.text ?? ''), blocks: (args.blocks as FakeMessage['blocks']) ?? [], updates: 0 };
        this.messages.push(message);
        return { ok: true, channel: message.channel, ts, message: { text: message.text, blocks: message.blocks } };
      }
      case 'chat.update': {
        const message = this.messages.find((m) => m.channel === args.channel && m.ts === args.ts);
        if (!message) return { ok: false, error: 'message_not_found' };
        message.text = String(args.text ?? message.text);
        message.blocks = (args.blocks as FakeMessage['blocks']) ?? message.blocks;
        message.updates += 1;
        return { ok: true, channel: message.channel, ts: message.ts };
      }
      case 'chat.postEphemeral':
        if (!args.channel || !args.user) return { ok: false, error: 'invalid_arguments' };
        return { ok: true, message_ts: this.newTs() };
      case 'views.open':
        if (!args.trigger_id || typeof args.view !== 'object') return { ok: false, error: 'invalid_arguments' };
        return { ok: true, view: { id: `V${this.calls.length}`, ...args.view } };
      case 'users.info': {
        const user = this.users.get(String(args.user));
        if (!user) return { ok: false, error: 'user_not_found' };
        return { ok: true, user: { id: args.user, team_id: user.team_id ?? 'T0FAKE', deleted: user.deleted ?? false, profile: user.email ? { email: user.email } : {} } };
      }
      default:
        return { ok: false, error: 'unknown_method' };
    }
  }

  private oauthAccess(args: Record<string, any>, authorization: string | undefined): Record<string, unknown> {
    const expected = `Basic ${Buffer.from(`${this.options.clientId}:${this.options.clientSecret}`).toString('base64')}`;
    if (!authorization || !same(authorization, expected)) return { ok: false, error: 'invalid_client_id' };
    if (!this.oauthCodes.delete(String(args.code))) return { ok: false, error: 'invalid_code' };
    const token = `${this.options.botToken}-install-${this.issuedTokens.length + 1}`;
    this.issuedTokens.push(token);
    return {
      ok: true,
      access_token: token,
      token_type: 'bot',
      scope: 'chat:write,im:write,users:read,users:read.email',
      bot_user_id: 'U0BOT',
      app_id: 'A0FAKE',
      team: { id: 'T0FAKE', name: 'Fake Team' },
      enterprise: null,
      is_enterprise_install: false,
      authed_user: { id: 'U0ADMIN' },
    };
  }

  private newTs(): string {
    const value = String(this.nextTs++);
    return `${value.slice(0, 10)}.${value.slice(10)}`;
  }
}

// ── What Slack sends ─────────────────────────────────────────────────────────────────────────

/** `v0=` and the hex HMAC-SHA256 of `v0:{timestamp}:{body}`, as Slack signs its requests. */
export function signSlack(secret: string, timestamp: string, body: string): string {
  return `v0=${createHmac('sha256', secret).update(`v0:${timestamp}:${body}`).digest('hex')}`;
}

export interface SignedRequestOptions {
  /** Seconds; now by default. */
  timestamp?: string;
  /** Overrides the signature (a bad or missing one: null sends none). */
  signature?: string | null;
  contentType?: string;
}

/** POSTs `body` to Greenlight's `path` as Slack does: signed with `secret`. */
export async function postAsSlack(baseUrl: string, path: string, body: string, secret: string, options: SignedRequestOptions = {}): Promise<{ status: number; body: any }> {
  const timestamp = options.timestamp ?? String(Math.floor(Date.now() / 1000));
  const signature = options.signature === undefined ? signSlack(secret, timestamp, body) : options.signature;
  const response = await fetch(`${baseUrl}${path}`, {
    method: 'POST',
    headers: {
      'content-type': options.contentType ?? 'application/x-www-form-urlencoded',
      'x-slack-request-timestamp': timestamp,
      ...(signature === null ? {} : { 'x-slack-signature': signature }),
    },
    body,
  });
  const text = await response.text();
  return { status: response.status, body: text === '' ? undefined : JSON.parse(text) };
}

/** An interaction payload as Slack posts it: the form field `payload`. */
export function interactionBody(payload: unknown): string {
  return new URLSearchParams({ payload: JSON.stringify(payload) }).toString();
}

/** A click on a review message's button (`block_actions`), by `userId`. */
export function clickPayload(actionId: string, reviewId: number, userId: string, message: { channel: string; ts: string }): Record<string, unknown> {
  return {
    type: 'block_actions',
    user: { id: userId, username: userId.toLowerCase(), team_id: 'T0FAKE' },
    team: { id: 'T0FAKE', domain: 'fake' },
    api_app_id: 'A0FAKE',
    trigger_id: `trigger-${Math.random().toString(36).slice(2)}`,
    container: { type: 'message', message_ts: message.ts, channel_id: message.channel, is_ephemeral: false },
    channel: { id: message.channel, name: 'reviews' },
    message: { type: 'message', ts: message.ts },
    response_url: 'https://hooks.slack.invalid/actions/T0FAKE/1/x',
    actions: [{ type: 'button', action_id: actionId, block_id: `gl.review.${reviewId}`, value: String(reviewId), action_ts: '1.2' }],
  };
}

/** A submitted modal (`view_submission`): the view Greenlight opened, with `values` typed into its inputs. */
export function submissionPayload(view: Record<string, any>, userId: string, values: Record<string, string>): Record<string, unknown> {
  return {
    type: 'view_submission',
    user: { id: userId, team_id: 'T0FAKE' },
    team: { id: 'T0FAKE', domain: 'fake' },
    api_app_id: 'A0FAKE',
    view: {
      ...view,
      id: 'V0FAKE',
      state: { values: Object.fromEntries(Object.entries(values).map(([id, value]) => [id, { [id]: { type: 'plain_text_input', value } }])) },
    },
  };
}

/** A hosted server's settings for organizations to add `slack` with OAuth (a fresh `slack_token_key`). */
export function hostedSlackSettings(slack: FakeSlack, operatorKey: string): Partial<Config> {
  return {
    edition: 'hosted',
    operator_key: operatorKey,
    slack_api_url: slack.apiUrl,
    slack_client_id: slack.options.clientId,
    slack_client_secret: slack.options.clientSecret,
    slack_token_key: randomBytes(32).toString('base64'),
  };
}
