import { describe, expect, it } from 'vitest';
import { EventStreamParser } from './event-stream';

describe('EventStreamParser', () => {
  it('yields events split anywhere across chunks, skipping comments and retry lines', () => {
    const parser = new EventStreamParser();
    const text = 'retry: 3000\n: connected\n\nevent: review.created\ndata: {"id":1}\n\n: keep-alive\n\nevent: review.decided\ndata: {"id":1,\ndata: "status":"approved"}\n\n';
    const events = [];
    for (let i = 0; i < text.length; i += 7) events.push(...parser.push(text.slice(i, i + 7)));
    expect(events).toEqual([
      { type: 'review.created', data: '{"id":1}' },
      { type: 'review.decided', data: '{"id":1,\n"status":"approved"}' },
    ]);
  });

  it('accepts CRLF line endings and keeps an unfinished event for the next chunk', () => {
    const parser = new EventStreamParser();
    expect(parser.push('event: a\r\ndata: 1\r\n\r\nevent: b\r\n')).toEqual([{ type: 'a', data: '1' }]);
    expect(parser.push('data: 2\r\n\r\n')).toEqual([{ type: 'b', data: '2' }]);
  });
});
