/**
 * Structured logging: one JSON object per line when the output is not a terminal (headless
 * servers, log collectors), a short readable line when a person is watching. Callers pass
 * facts as fields; keys and attachment contents never belong in them.
 */

export type LogLevel = 'debug' | 'info' | 'warn' | 'error';
export type LogFields = Record<string, unknown>;

export interface Logger {
  debug(message: string, fields?: LogFields): void;
  info(message: string, fields?: LogFields): void;
  warn(message: string, fields?: LogFields): void;
  error(message: string, fields?: LogFields): void;
}

export interface LoggerOptions {
  stream?: NodeJS.WritableStream & { isTTY?: boolean };
  format?: 'json' | 'text';
  level?: LogLevel;
}

const RANK: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40 };

const guardedStreams = new WeakSet<NodeJS.WritableStream>();

/** A log reader that went away (`greenlight start | head`) must not take the server down. */
function ignoreWriteErrors(stream: NodeJS.WritableStream): void {
  if (guardedStreams.has(stream)) return;
  guardedStreams.add(stream);
  stream.on('error', () => {});
}

export function createLogger(options: LoggerOptions = {}): Logger {
  const stream = options.stream ?? process.stdout;
  const format = options.format ?? (stream.isTTY ? 'text' : 'json');
  const threshold = RANK[options.level ?? 'info'];
  ignoreWriteErrors(stream);

  const write = (level: LogLevel, message: string, fields: LogFields = {}): void => {
    if (RANK[level] < threshold) return;
    const time = new Date().toISOString();
    if (format === 'json') {
      stream.write(`${JSON.stringify({ time, level, message, ...fields })}\n`);
      return;
    }
    const details = Object.entries(fields)
      .map(([key, value]) => `${key}=${typeof value === 'string' ? value : JSON.stringify(value)}`)
      .join(' ');
    stream.write(`${time.slice(11, 19)} ${level.padEnd(5)} ${message}${details ? `  ${details}` : ''}\n`);
  };

  return {
    debug: (message, fields) => write('debug', message, fields),
    info: (message, fields) => write('info', message, fields),
    warn: (message, fields) => write('warn', message, fields),
    error: (message, fields) => write('error', message, fields),
  };
}

/** For tests and embedders that want silence. */
export const silentLogger: Logger = { debug() {}, info() {}, warn() {}, error() {} };
