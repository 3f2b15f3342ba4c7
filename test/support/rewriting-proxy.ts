import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface RewritingProxy {
  url: string;
  close(): Promise<void>;
}

/**
 * What stands between an agent and Greenlight when someone alters the answers on the way: a
 * loopback HTTP proxy that forwards every request to `target` and passes each JSON answer
 * through `rewrite` (a changed decision, a receipt swapped in). Everything else goes as it came.
 */
export async function startRewritingProxy(target: string, rewrite: (body: any, path: string) => unknown): Promise<RewritingProxy> {
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', async () => {
      try {
        const headers = Object.fromEntries(Object.entries(req.headers).filter(([name]) => !['host', 'connection', 'content-length'].includes(name))) as Record<string, string>;
        const body = chunks.length > 0 ? Buffer.concat(chunks) : undefined;
        const answer = await fetch(`${target}${req.url}`, { method: req.method, headers, body });
        let text = await answer.text();
        if ((answer.headers.get('content-type') ?? '').includes('json') && text !== '') text = JSON.stringify(rewrite(JSON.parse(text), req.url ?? '/'));
        const passed = Object.fromEntries([...answer.headers].filter(([name]) => !['content-length', 'content-encoding', 'transfer-encoding', 'connection'].includes(name)));
        res.writeHead(answer.status, passed).end(text);
      } catch (error) {
        res.writeHead(502).end(String(error));
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
