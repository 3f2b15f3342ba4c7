import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { TransportSendOptions } from '@modelcontextprotocol/sdk/shared/transport.js';
import {
  CancelledNotificationSchema,
  ErrorCode,
  isJSONRPCErrorResponse,
  isJSONRPCResultResponse,
  type JSONRPCMessage,
  JSONRPCRequestSchema,
  type RequestId,
} from '@modelcontextprotocol/sdk/types.js';
import { describeIssues } from './request-checks';

/*
 * The parts of the HTTP sessions that need the SDK, behind a module of our own so that
 * `McpHttpSessions` can load them with the first session: through this CommonJS module it is
 * the same SDK build the tools use.
 */

/** A JSON-RPC error answered to a whole POST, before the transport sees it. */
export interface Refusal {
  code: number;
  message: string;
  id: RequestId | null;
}

/** The requests of a POST (a message or a batch), as far as they can be told apart from the rest. */
interface Sorted {
  requests: Array<{ id: RequestId; message: unknown }>;
  cancelled: RequestId[];
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function sort(body: unknown): Sorted {
  const sorted: Sorted = { requests: [], cancelled: [] };
  for (const message of Array.isArray(body) ? body : [body]) {
    if (!isRecord(message) || typeof message.method !== 'string') continue;
    if (typeof message.id === 'string' || typeof message.id === 'number') sorted.requests.push({ id: message.id, message });
    const cancellation = CancelledNotificationSchema.safeParse(message);
    if (cancellation.success && cancellation.data.params.requestId !== undefined) sorted.cancelled.push(cancellation.data.params.requestId);
  }
  return sorted;
}

/**
 * The SDK's transport for one session, which also keeps the JSON-RPC ids of the client's
 * requests in progress. The SDK routes each answer to the stream of the POST that carried
 * its request by the id alone: a second request with an id still in progress takes over the
 * first one's route, and every stream but one is left without an answer for good. So a POST
 * is checked (`admit`) before the transport sees it, and an id is free again once its
 * request is answered or cancelled.
 */
export class SessionTransport extends StreamableHTTPServerTransport {
  private readonly inProgress = new Set<RequestId>();

  /**
   * Refuses a POST with a request whose params are not of the protocol's shape (-32602; the
   * transport would answer a parse error) or whose id is in progress already (-32600);
   * otherwise claims its requests' ids and returns what to call once the transport is done with it.
   */
  admit(body: unknown): Refusal | { done(answered: boolean): void } {
    const { requests, cancelled } = sort(body);
    const ids = new Set<RequestId>();
    for (const { id, message } of requests) {
      const parsed = JSONRPCRequestSchema.safeParse(message);
      if (!parsed.success) {
        const { issues } = parsed.error;
        const inParams = issues[0].path[0] === 'params';
        const code = inParams ? ErrorCode.InvalidParams : ErrorCode.InvalidRequest;
        return { code, message: `${inParams ? 'Invalid params' : 'Invalid Request'}: ${describeIssues(issues)}`, id };
      }
      if (this.inProgress.has(id) || ids.has(id)) {
        const message = `Invalid Request: a request with id ${JSON.stringify(id)} is already in progress in this session; give each request an id of its own`;
        return { code: ErrorCode.InvalidRequest, message, id };
      }
      ids.add(id);
    }
    for (const id of ids) this.inProgress.add(id);
    return {
      done: (answered) => {
        // A POST the transport refused never reached the server: nothing will answer its requests.
        if (!answered) for (const id of ids) this.inProgress.delete(id);
        // The SDK answers nothing to a cancelled request.
        for (const id of cancelled) this.inProgress.delete(id);
      },
    };
  }

  override async send(message: JSONRPCMessage, options?: TransportSendOptions): Promise<void> {
    try {
      await super.send(message, options);
    } finally {
      // Sent or not (the client may have hung up), the request has had its answer.
      if ((isJSONRPCResultResponse(message) || isJSONRPCErrorResponse(message)) && message.id !== undefined) this.inProgress.delete(message.id);
    }
  }
}
