import { ChatUnavailable } from '../../domain/chat/ports';

/** Longest a Web API call may take; past it, the call counts as Slack being down. */
const TIMEOUT_MS = 10_000;

/** Errors that say the call will never succeed as it is: retrying would only repeat them. */
const PERMANENT_ERRORS = new Set([
  'invalid_auth',
  'not_authed',
  'account_inactive',
  'token_revoked',
  'token_expired',
  'no_permission',
  'missing_scope',
  'channel_not_found',
  'not_in_channel',
  'is_archived',
  'invalid_blocks',
  'invalid_arguments',
  'msg_too_long',
  'message_not_found',
  'cant_update_message',
  'user_not_found',
  'expired_trigger_id',
  'invalid_trigger_id',
]);

/** `Retry-After` in milliseconds (Slack sends seconds). */
function retryAfterMs(header: string | null): number | null {
  if (header === null || !/^\d+$/.test(header.trim())) return null;
  return Number(header.trim()) * 1000;
}

export type SlackAnswer = Record<string, unknown> & { ok: true };

/**
 * Slack's Web API over `fetch`: `{api_url}/{method}` with a form body and the token as Bearer.
 * A 429 or 5xx, a network failure and an `ok: false` become `ChatUnavailable`, telling a retry
 * worth making from one that is not; retrying is the caller's (the outbox keeps it across restarts).
 */
export class SlackWebApi {
  constructor(
    private readonly apiUrl: string,
    private readonly token: () => string,
  ) {}

  /**
   * Arguments go form-encoded, objects and arrays as JSON, as Slack's own SDK sends them: every
   * method takes that, while some (`users.info`) take no JSON body.
   */
  async call(method: string, args: Record<string, unknown>): Promise<SlackAnswer> {
    const form = new URLSearchParams();
    for (const [name, value] of Object.entries(args)) {
      if (value !== undefined && value !== null) form.set(name, typeof value === 'object' ? JSON.stringify(value) : String(value));
    }
    return this.send(method, {
      headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: `Bearer ${this.token()}` },
      body: form.toString(),
    });
  }

  /** A call authenticated by HTTP Basic (client id and secret), form-encoded: `oauth.v2.access`. */
  async callWithBasic(method: string, clientId: string, clientSecret: string, args: Record<string, string>): Promise<SlackAnswer> {
    return this.send(method, {
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        authorization: `Basic ${Buffer.from(`${encodeURIComponent(clientId)}:${encodeURIComponent(clientSecret)}`).toString('base64')}`,
      },
      body: new URLSearchParams(args).toString(),
    });
  }

  private async send(method: string, init: { headers: Record<string, string>; body: string }): Promise<SlackAnswer> {
    let response: Response;
    try {
      response = await fetch(`${this.apiUrl.replace(/\/+$/, '')}/${method}`, { method: 'POST', ...init, redirect: 'error', signal: AbortSignal.timeout(TIMEOUT_MS) });
    } catch (error) {
      const cause = (error as { cause?: { code?: string } }).cause?.code;
      throw new ChatUnavailable(`Slack's ${method} could not be reached${cause ? ` (${cause})` : ''}`, null, true);
    }
    if (response.status === 429) {
      await response.body?.cancel();
      throw new ChatUnavailable(`Slack's ${method} is rate-limited`, retryAfterMs(response.headers.get('retry-after')), true);
    }
    if (response.status !== 200) {
      await response.body?.cancel();
      throw new ChatUnavailable(`Slack's ${method} answered ${response.status}`, retryAfterMs(response.headers.get('retry-after')), response.status >= 500);
    }
    let answer: { ok?: unknown; error?: unknown };
    try {
      answer = (await response.json()) as { ok?: unknown; error?: unknown };
    } catch {
      throw new ChatUnavailable(`Slack's ${method} answered something other than JSON`, null, true);
    }
    if (answer.ok !== true) {
      const error = typeof answer.error === 'string' ? answer.error : 'unknown_error';
      throw new ChatUnavailable(`Slack's ${method} answered ${error}`, null, !PERMANENT_ERRORS.has(error));
    }
    return answer as SlackAnswer;
  }
}
