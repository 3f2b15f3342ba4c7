import type { Transport, TransportSendOptions } from '@modelcontextprotocol/sdk/shared/transport.js';
import {
  ClientRequestSchema,
  ErrorCode,
  isJSONRPCRequest,
  type JSONRPCMessage,
  type JSONRPCRequest,
  type MessageExtraInfo,
} from '@modelcontextprotocol/sdk/types.js';
import type { z } from 'zod';

/** The SDK's schema of each request a client may send, by method. */
const requestSchemas = new Map<string, z.ZodType>(ClientRequestSchema.options.map((schema) => [schema.shape.method.value, schema]));

/**
 * One line on the first thing wrong, naming the field: `params.cursor: expected string,
 * received number`. Zod's own message for a union is only "Invalid input".
 */
export function describeIssues(issues: readonly z.core.$ZodIssue[]): string {
  const [issue] = issues;
  const where = issue.path.map(String).join('.') || 'the message';
  if (issue.code === 'invalid_union') {
    const expected = new Set(issue.errors.flat().flatMap((branch) => (branch.code === 'invalid_type' && branch.path.length === 0 ? [branch.expected] : [])));
    if (expected.size > 0) return `${where}: expected ${[...expected].join(' or ')}`;
  }
  return `${where}: ${issue.message.replace(/^Invalid input: /, '')}`;
}

/** Why `request` cannot be served as sent (an answer for -32602), or undefined when it can. */
export function invalidParams(request: JSONRPCRequest, toolNames: ReadonlySet<string>): string | undefined {
  // Methods the SDK does not know it answers itself, with -32601.
  const schema = requestSchemas.get(request.method);
  if (!schema) return undefined;
  const parsed = schema.safeParse(request);
  if (!parsed.success) return `Invalid params: ${describeIssues(parsed.error.issues)}`;
  const tool = request.method === 'tools/call' ? String(request.params?.name) : undefined;
  if (tool !== undefined && !toolNames.has(tool)) return `Invalid params: unknown tool ${tool}; the tools are ${[...toolNames].join(', ')}`;
  return undefined;
}

/**
 * A transport that answers requests with params the SDK would refuse before they reach it:
 * the SDK answers those with -32603 and the validation error's JSON, and an unknown tool with
 * a tool result, where MCP asks for -32602 (Invalid params). Arguments that do not fit a
 * tool's input schema still reach the tool's validation, which answers with a tool error
 * naming the rule, as the specification prefers for input a model can correct.
 */
export class CheckedTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage, extra?: MessageExtraInfo) => void;

  constructor(private readonly inner: Transport, private readonly toolNames: ReadonlySet<string>) {
    inner.onclose = () => this.onclose?.();
    inner.onerror = (error) => this.onerror?.(error);
    inner.onmessage = (message, extra) => this.receive(message, extra);
  }

  get sessionId(): string | undefined {
    return this.inner.sessionId;
  }

  start(): Promise<void> {
    return this.inner.start();
  }

  send(message: JSONRPCMessage, options?: TransportSendOptions): Promise<void> {
    return this.inner.send(message, options);
  }

  close(): Promise<void> {
    return this.inner.close();
  }

  setProtocolVersion(version: string): void {
    this.inner.setProtocolVersion?.(version);
  }

  private receive(message: JSONRPCMessage, extra?: MessageExtraInfo): void {
    const problem = isJSONRPCRequest(message) ? invalidParams(message, this.toolNames) : undefined;
    if (problem === undefined) return this.onmessage?.(message, extra);
    const refusal: JSONRPCMessage = { jsonrpc: '2.0', id: (message as JSONRPCRequest).id, error: { code: ErrorCode.InvalidParams, message: problem } };
    this.inner.send(refusal).catch((error: Error) => this.onerror?.(error));
  }
}
