/**
 * JSON as it travels, not as JavaScript holds it: an object's members keep their order and
 * may repeat a key or be called `__proto__`, and a number can be any token (`1e309`, `-0`),
 * none of which a plain object and JSON.stringify can express.
 */
export type WireJson = null | boolean | number | string | JsonToken | JsonObject | WireJson[];

/** Text written into the document verbatim: a number JavaScript cannot hold, or something that is not JSON at all. */
export class JsonToken {
  constructor(readonly text: string) {}
}

export class JsonObject {
  constructor(readonly members: ReadonlyArray<readonly [string, WireJson]>) {}
}

export function encodeJson(value: WireJson): string {
  if (value instanceof JsonToken) return value.text;
  if (value instanceof JsonObject) return `{${value.members.map(([name, member]) => `${JSON.stringify(name)}:${encodeJson(member)}`).join(',')}}`;
  if (Array.isArray(value)) return `[${value.map(encodeJson).join(',')}]`;
  return JSON.stringify(value);
}

/** `[[[…]]]` or `{"a":{"a":…}}`, `levels` deep. */
export function nestedText(levels: number, kind: 'array' | 'object'): string {
  return kind === 'array' ? '['.repeat(levels) + ']'.repeat(levels) : '{"a":'.repeat(levels) + '1' + '}'.repeat(levels);
}
