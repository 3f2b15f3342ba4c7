import { EventStreamParser } from './event-stream';
import type {
  AttachmentRecord,
  DecisionInput,
  DecisionRecord,
  Edition,
  EventType,
  FeedbackRecord,
  InvitationView,
  Problem,
  ReviewPage,
  ReviewQuery,
  ReviewRecord,
  Schemas,
  ServiceEvents,
  SessionView,
  Statistics,
  VoteAnswer,
} from './types';

export type { ReviewQuery };

/** A request the API refused or could not answer, in words a reviewer understands. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly problem?: Problem,
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

/** The API wants a key, or a different one. */
export class UnauthorizedError extends ApiError {
  constructor(
    message: string,
    /** The key the refused request carried, so a late answer to an old key can be told apart. */
    readonly keySent: string | null,
  ) {
    super(401, message);
  }
}

/** Someone else decided first; `decision` is the one that stands. */
export class AlreadyDecidedError extends ApiError {
  constructor(
    message: string,
    readonly decision: DecisionRecord,
  ) {
    super(409, message);
  }
}

export interface EventHandlers {
  onOpen(): void;
  onEvent<K extends EventType>(type: K, payload: ServiceEvents[K]): void;
}

export interface ApiClientOptions {
  /** `/api` behind the dashboard server; a full URL elsewhere (tests, other hosts). */
  baseUrl: string;
  apiKey: () => string | null;
  /** The signed-in session's CSRF token (hosted edition), sent on every request that changes something. */
  csrfToken?: () => string | null;
}

function messageFor(status: number, problem: Problem | undefined): string {
  if (status === 401) return problem?.detail ?? 'This server needs an API key.';
  if (status === 502 || status === 503) return problem?.detail ?? 'The Greenlight server is not answering right now.';
  if (status >= 500) return 'The server hit an unexpected error (it has been logged). Try again.';
  return problem?.detail ?? `The server refused the request (${status}).`;
}

/** The one place that knows the API's URLs. */
export class ApiClient {
  constructor(private readonly options: ApiClientOptions) {}

  listReviews(query: ReviewQuery): Promise<ReviewPage> {
    const params = new URLSearchParams();
    for (const [name, value] of Object.entries(query)) {
      if (value !== undefined && value !== '') params.set(name, String(value));
    }
    return this.request(`/reviews?${params}`);
  }

  getReview(id: number): Promise<ReviewRecord> {
    return this.request(`/reviews/${id}`);
  }

  /** The decision; or, in a review an approval workflow governs, the vote counted while it waits for more (202). */
  async decide(id: number, input: DecisionInput): Promise<DecisionRecord | VoteAnswer> {
    try {
      return await this.request(`/reviews/${id}/decide`, { method: 'POST', body: input });
    } catch (error) {
      if (error instanceof ApiError && error.status === 409 && error.problem?.decision) {
        throw new AlreadyDecidedError(error.message, error.problem.decision as DecisionRecord);
      }
      throw error;
    }
  }

  /**
   * Sends a decision as the page goes away: `keepalive` lets the request finish after the
   * page has gone, and nobody is left to read its answer. (Such requests share a 64 KB
   * budget, far above a decision's size.)
   */
  decideOutlivingPage(id: number, input: DecisionInput): void {
    const headers = this.headers({ 'content-type': 'application/json' });
    void fetch(`${this.options.baseUrl}/reviews/${id}/decide`, { method: 'POST', keepalive: true, headers, body: JSON.stringify(input) }).catch(
      () => undefined,
    );
  }

  async listFeedback(reviewId: number): Promise<FeedbackRecord[]> {
    return (await this.request<Schemas['FeedbackList']>(`/reviews/${reviewId}/feedback`)).feedback;
  }

  async listAttachments(reviewId: number): Promise<AttachmentRecord[]> {
    return (await this.request<Schemas['AttachmentList']>(`/reviews/${reviewId}/attachments`)).attachments;
  }

  /** Fetched rather than linked, so the API key travels in a header and never in a URL. */
  async downloadAttachment(id: number): Promise<Blob> {
    const response = await this.send(`/attachments/${id}/download`);
    return response.blob();
  }

  statistics(): Promise<Statistics> {
    return this.request('/stats');
  }

  /** Which edition answers; /health is open without any credential. */
  async edition(): Promise<Edition> {
    try {
      return (await this.request<Schemas['Health']>('/health')).edition;
    } catch (failure) {
      // An unhealthy server (503) still says which edition it is.
      const edition = failure instanceof ApiError ? failure.problem?.edition : undefined;
      if (edition === 'hosted' || edition === 'self-hosted') return edition;
      throw failure;
    }
  }

  /** The signed-in person's session (hosted edition); an UnauthorizedError when there is none. */
  currentSession(): Promise<SessionView> {
    return this.request('/sessions/current');
  }

  signIn(email: string, password: string, organizationId?: number): Promise<SessionView> {
    return this.request('/sessions', { method: 'POST', body: { email, password, ...(organizationId === undefined ? {} : { organization_id: organizationId }) } });
  }

  signOut(): Promise<void> {
    return this.request('/sessions/current', { method: 'DELETE' });
  }

  lookUpInvitation(token: string): Promise<InvitationView> {
    return this.request('/invitations/lookup', { method: 'POST', body: { token } });
  }

  acceptInvitation(token: string, password: string): Promise<SessionView> {
    return this.request('/invitations/accept', { method: 'POST', body: { token, password } });
  }

  /**
   * Reads `GET /events` until `signal` aborts or the stream ends. Uses fetch rather than
   * EventSource, which cannot send the Authorization header.
   */
  async streamEvents(handlers: EventHandlers, signal: AbortSignal): Promise<void> {
    const response = await this.send('/events', { signal, headers: { accept: 'text/event-stream' } });
    handlers.onOpen();
    const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
    const parser = new EventStreamParser();
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      for (const event of parser.push(value)) {
        handlers.onEvent(event.type as EventType, JSON.parse(event.data));
      }
    }
  }

  /** Any JSON call of the API; an answer without a body (204) is undefined. */
  async request<T>(path: string, init: { method?: string; body?: unknown } = {}): Promise<T> {
    const response = await this.send(path, {
      method: init.method,
      body: init.body === undefined ? undefined : JSON.stringify(init.body),
      headers: init.body === undefined ? {} : { 'content-type': 'application/json' },
    });
    if (response.status === 204) return undefined as T;
    return (await response.json()) as T;
  }

  private headers(init?: HeadersInit): Headers {
    const key = this.options.apiKey();
    const csrfToken = this.options.csrfToken?.();
    const headers = new Headers(init);
    if (key) headers.set('authorization', `Bearer ${key}`);
    if (csrfToken) headers.set('x-csrf-token', csrfToken);
    return headers;
  }

  private async send(path: string, init: RequestInit = {}): Promise<Response> {
    const key = this.options.apiKey();
    const headers = this.headers(init.headers);
    let response: Response;
    try {
      response = await fetch(`${this.options.baseUrl}${path}`, { ...init, headers });
    } catch (error) {
      if ((error as Error).name === 'AbortError') throw error;
      throw new ApiError(0, 'Cannot reach the Greenlight server. Check that it is running and your connection.');
    }
    if (response.ok) return response;
    const problem = (await response.json().catch(() => undefined)) as Problem | undefined;
    const message = messageFor(response.status, problem);
    if (response.status === 401) throw new UnauthorizedError(message, key);
    throw new ApiError(response.status, message, problem);
  }
}
