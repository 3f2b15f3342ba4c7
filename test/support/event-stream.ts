export interface ServerSentEvent {
  id: number;
  event: string;
  data: any;
}

/** Reads an SSE stream with fetch, as the dashboard does, collecting events and comments. */
export async function subscribe(url: string, init: RequestInit = {}) {
  const controller = new AbortController();
  const response = await fetch(`${url}/events`, { ...init, signal: controller.signal });
  const events: ServerSentEvent[] = [];
  const comments: string[] = [];
  const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = '';
  const done = (async () => {
    try {
      for (;;) {
        const { value, done: finished } = await reader.read();
        if (finished) return;
        buffer += value;
        let end: number;
        while ((end = buffer.indexOf('\n\n')) >= 0) {
          const block = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          const fields = Object.fromEntries(block.split('\n').filter((l) => !l.startsWith(':')).map((l) => [l.slice(0, l.indexOf(':')), l.slice(l.indexOf(':') + 2)]));
          for (const line of block.split('\n')) if (line.startsWith(':')) comments.push(line.slice(1).trim());
          if (fields.event) events.push({ id: Number(fields.id), event: fields.event, data: JSON.parse(fields.data) });
        }
      }
    } catch {
      // aborted by the test or ended by the server
    }
  })();
  return { response, events, comments, close: () => controller.abort(), done };
}
