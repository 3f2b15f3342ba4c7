import net from 'node:net';

export interface TcpGate {
  /** `url` with its host and port replaced by the gate's. */
  through(url: string): string;
  /** From now on, what clients send waits at the gate (what the target sends back still passes). */
  hold(): void;
  /** Resolves once something sent has been held back. */
  somethingHeld(): Promise<void>;
  /** Sends on what was held, in order, and holds nothing more. */
  release(): void;
  close(): Promise<void>;
}

/**
 * A loopback TCP proxy to `target` (a URL's host and port) that can hold back what its clients
 * send: a process's database connections made slow at a moment a test chooses, with no timer.
 */
export async function startTcpGate(target: string): Promise<TcpGate> {
  const { hostname, port } = new URL(target);
  let holding = false;
  let held: Array<() => void> = [];
  let onHeld: Array<() => void> = [];
  const sockets = new Set<net.Socket>();
  const server = net.createServer((client) => {
    const upstream = net.connect(Number(port), hostname);
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on('error', () => undefined);
      socket.on('close', () => {
        sockets.delete(socket);
        client.destroy();
        upstream.destroy();
      });
    }
    upstream.pipe(client);
    client.on('data', (chunk: Buffer) => {
      if (!holding) return void upstream.write(chunk);
      held.push(() => upstream.write(chunk));
      for (const resolve of onHeld) resolve();
      onHeld = [];
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const gatePort = (server.address() as net.AddressInfo).port;
  return {
    through(url) {
      const rewritten = new URL(url);
      rewritten.hostname = '127.0.0.1';
      rewritten.port = String(gatePort);
      return rewritten.toString();
    },
    hold() {
      holding = true;
    },
    somethingHeld() {
      return held.length > 0 ? Promise.resolve() : new Promise((resolve) => onHeld.push(resolve));
    },
    release() {
      holding = false;
      for (const send of held) send();
      held = [];
    },
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
