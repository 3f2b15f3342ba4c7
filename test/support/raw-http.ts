import http from 'node:http';

export interface RawRequest {
  method: string;
  /** Sent exactly as written: odd ids, `..`, percent-escapes of invalid UTF-8 reach the server untouched. */
  path: string;
  headers?: Record<string, string>;
  body?: Buffer;
}

export interface RawResponse {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
}

export interface SendOptions {
  /** Connections to reuse; without one every request opens (and closes) its own. */
  agent?: http.Agent;
  timeoutMs?: number;
}

/**
 * One request over node:http, which (unlike fetch) sends any path, body and content type it is
 * given. The body always goes with a Content-Length: without one node sends a DELETE's or GET's
 * body as the start of a next request. An event stream answering a GET is a subscription that
 * stays open: it resolves once its headers arrive, with an empty body (one answering a POST, as
 * MCP's do, ends with its answer and is read whole). A request error after the answer (the
 * server closing while a refused body is still being sent) does not undo the answer.
 */
export function send(baseUrl: string, request: RawRequest, options: SendOptions = {}): Promise<RawResponse> {
  const { hostname, port } = new URL(baseUrl);
  const headers = { ...request.headers };
  if (request.body !== undefined && !hasHeader(headers, 'transfer-encoding')) headers['content-length'] = String(request.body.length);
  return new Promise((resolve, reject) => {
    let answered = false;
    const outgoing = http.request(
      { hostname, port, method: request.method, path: request.path, headers, agent: options.agent ?? false },
      (incoming) => {
        answered = true;
        const answer = { status: incoming.statusCode ?? 0, headers: incoming.headers };
        if (request.method === 'GET' && String(incoming.headers['content-type']).startsWith('text/event-stream')) {
          incoming.destroy();
          resolve({ ...answer, body: Buffer.alloc(0) });
          return;
        }
        const chunks: Buffer[] = [];
        incoming.on('data', (chunk: Buffer) => chunks.push(chunk));
        incoming.on('end', () => resolve({ ...answer, body: Buffer.concat(chunks) }));
        incoming.on('error', reject);
      },
    );
    outgoing.setTimeout(options.timeoutMs ?? 15_000, () => outgoing.destroy(new Error(`no answer within ${options.timeoutMs ?? 15_000} ms`)));
    outgoing.on('error', (error) => {
      if (!answered) reject(error);
    });
    outgoing.end(request.body);
  });
}

/**
 * Sends the headers and the first `bytes` of the body, then closes the connection without
 * waiting for the answer: a client that crashed or gave up mid-upload or mid-wait.
 */
export async function sendAndHangUp(baseUrl: string, request: RawRequest, bytes: number, afterMs: number): Promise<void> {
  const { hostname, port } = new URL(baseUrl);
  const headers = { ...request.headers, ...(request.body === undefined ? {} : { 'content-length': String(request.body.length) }) };
  const outgoing = http.request({ hostname, port, method: request.method, path: request.path, headers, agent: false });
  outgoing.on('error', () => undefined);
  outgoing.on('response', (incoming) => incoming.resume());
  if (request.body === undefined) outgoing.flushHeaders();
  else outgoing.write(request.body.subarray(0, bytes));
  await new Promise((resolve) => setTimeout(resolve, afterMs));
  outgoing.destroy();
}

function hasHeader(headers: Record<string, string>, name: string): boolean {
  return Object.keys(headers).some((key) => key.toLowerCase() === name);
}

/** A JSON request body with its content type. */
export function jsonRequest(method: string, path: string, body: unknown): RawRequest {
  return { method, path, headers: { 'content-type': 'application/json' }, body: Buffer.from(JSON.stringify(body)) };
}

/** A multipart/form-data body exactly as fetch (and so a browser) would encode `fields`. */
export async function multipart(fields: Record<string, string | Blob>): Promise<{ headers: Record<string, string>; body: Buffer }> {
  const form = new FormData();
  for (const [name, value] of Object.entries(fields)) {
    if (typeof value === 'string') form.append(name, value);
    else form.append(name, value, 'notes.txt');
  }
  const encoded = new Response(form);
  return { headers: { 'content-type': encoded.headers.get('content-type')! }, body: Buffer.from(await encoded.arrayBuffer()) };
}

/** The answer's body parsed as JSON; undefined when it is empty or not JSON. */
export function jsonOf<T = unknown>(response: RawResponse): T | undefined {
  try {
    return JSON.parse(response.body.toString('utf8')) as T;
  } catch {
    return undefined;
  }
}
