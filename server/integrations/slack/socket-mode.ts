import { createHash } from 'node:crypto';
import WebSocket from 'ws';
import type { Log } from '../../domain/shared/unit-of-work';
import type { SlackEventHandler } from './events';
import type { SlackInbound } from './inbound';
import type { SlackWebApi } from './web-api';

/** Envelopes remembered, to handle a retried one once. */
const REMEMBERED = 1_000;
/** After a connection failed to open or dropped, the next try waits from a second up to this. */
const MAX_RECONNECT_MS = 30_000;

export interface SocketModeOptions {
  /** `apps.connections.open`, called with the app-level token (`xapp-…`). */
  api: SlackWebApi;
  inbound: SlackInbound;
  /** Events (`events_api` envelopes): acknowledged first, then handed here. */
  onEvent: SlackEventHandler;
  log: Log;
}

interface Envelope {
  envelope_id?: string;
  type?: string;
  payload?: Record<string, unknown>;
  retry_attempt?: number;
  reason?: string;
}

/**
 * Slack's Socket Mode: the app opens a WebSocket to Slack (no public URL needed), and Slack
 * sends each interaction and event over it as an envelope to acknowledge within 3 s. A retried
 * envelope (Slack heard no ack in time) is acknowledged again and handled once. On `disconnect`
 * (Slack refreshes connections every few hours) the new connection opens before the old one
 * closes, so nothing sent meanwhile is lost; a connection that drops is reopened with a back-off.
 */
export class SocketModeClient {
  private current: WebSocket | null = null;
  private stopped = false;
  private failures = 0;
  private reconnectTimer: NodeJS.Timeout | undefined;
  private readonly handled = new Set<string>();
  private connecting: Promise<void> | null = null;

  constructor(private readonly options: SocketModeOptions) {}

  /** Opens the first connection; resolves once Slack said hello (or the first try failed and a retry is scheduled). */
  async start(): Promise<void> {
    await this.connect();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.reconnectTimer);
    const socket = this.current;
    this.current = null;
    if (socket && socket.readyState !== WebSocket.CLOSED) {
      await new Promise<void>((resolve) => {
        socket.once('close', () => resolve());
        socket.close(1000);
      });
    }
  }

  /** Whether a connection is open and greeted. */
  get connected(): boolean {
    return this.current?.readyState === WebSocket.OPEN;
  }

  /** Opens a new connection and makes it the current one once Slack greets it; the old one is closed after. */
  private connect(): Promise<void> {
    this.connecting ??= this.open()
      .then((socket) => {
        const previous = this.current;
        this.current = socket;
        this.failures = 0;
        if (previous && previous !== socket) previous.close(1000);
      })
      .catch((error: unknown) => {
        this.options.log.error('could not open the Slack Socket Mode connection; trying again', { error: String(error) });
        this.scheduleReconnect();
      })
      .finally(() => {
        this.connecting = null;
      });
    return this.connecting;
  }

  private scheduleReconnect(): void {
    if (this.stopped) return;
    clearTimeout(this.reconnectTimer);
    const wait = Math.min(1000 * 2 ** this.failures++, MAX_RECONNECT_MS);
    this.reconnectTimer = setTimeout(() => void this.connect(), wait);
    this.reconnectTimer.unref();
  }

  /** A new socket, resolved when Slack says `hello`. */
  private async open(): Promise<WebSocket> {
    const answer = await this.options.api.call('apps.connections.open', {});
    if (typeof answer.url !== 'string') throw new Error('apps.connections.open gave no url');
    const socket = new WebSocket(answer.url);
    return new Promise<WebSocket>((resolve, reject) => {
      let greeted = false;
      socket.on('message', (data: Buffer) => {
        let envelope: Envelope;
        try {
          envelope = JSON.parse(data.toString('utf8')) as Envelope;
        } catch {
          return;
        }
        if (envelope.type === 'hello') {
          greeted = true;
          resolve(socket);
        } else if (envelope.type === 'disconnect') {
          if (socket === this.current && !this.stopped) void this.connect();
        } else if (envelope.envelope_id) {
          void this.receive(socket, envelope);
        }
      });
      socket.on('error', (error) => {
        if (!greeted) reject(error);
      });
      socket.on('close', () => {
        if (!greeted) reject(new Error('the connection closed before Slack said hello'));
        // The current connection dropped without a replacement under way: open another.
        else if (socket === this.current && !this.stopped) {
          this.current = null;
          this.scheduleReconnect();
        }
      });
    });
  }

  /** Acknowledges an envelope in time, and handles it unless it was handled already. */
  private async receive(socket: WebSocket, envelope: Envelope): Promise<void> {
    const key = envelope.envelope_id as string;
    // A retry carries the same payload: known by either its id or what it says.
    const fingerprint = createHash('sha256').update(JSON.stringify(envelope.payload ?? null)).digest('hex');
    const seen = this.handled.has(key) || this.handled.has(fingerprint);
    this.remember(key);
    this.remember(fingerprint);
    const ack = (payload?: Record<string, unknown> | null) => {
      if (socket.readyState === WebSocket.OPEN) socket.send(JSON.stringify(payload ? { envelope_id: key, payload } : { envelope_id: key }));
    };
    if (seen) {
      ack();
      return;
    }
    try {
      if (envelope.type === 'interactive') {
        ack(await this.options.inbound.answer(envelope.payload));
      } else if (envelope.type === 'events_api') {
        ack();
        const payload = envelope.payload ?? {};
        const event = typeof payload.event === 'object' && payload.event !== null ? (payload.event as Record<string, unknown>) : {};
        if (typeof event.type === 'string') await this.options.onEvent({ type: event.type, team_id: typeof payload.team_id === 'string' ? payload.team_id : null, payload: event });
      } else {
        ack();
      }
    } catch (error) {
      this.options.log.error('a Slack Socket Mode envelope failed', { type: envelope.type, error: String(error) });
    }
  }

  private remember(key: string): void {
    this.handled.add(key);
    if (this.handled.size > REMEMBERED * 2) {
      // Sets keep insertion order: the oldest go first.
      for (const old of [...this.handled].slice(0, this.handled.size - REMEMBERED * 2)) this.handled.delete(old);
    }
  }
}
