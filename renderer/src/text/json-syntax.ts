/**
 * Where a JSON text stops being JSON, and why, in words a reviewer editing tool arguments can
 * act on. `JSON.parse` says only some of this, and differently in each engine; this reader
 * follows RFC 8259 and stops at the first error.
 */

export interface JsonSyntaxError {
  /** Index in the text (UTF-16 code units) where the error is. */
  offset: number;
  message: string;
}

class Stop {
  constructor(
    readonly offset: number,
    readonly message: string,
  ) {}
}

const NUMBER = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y;
const ESCAPE = /\\(?:["\\/bfnrt]|u[0-9a-fA-F]{4})/y;
/** Nesting deeper than this is reported rather than followed (the reader is recursive). */
const MAX_DEPTH = 2_000;

function describe(char: string): string {
  if (char === "'") return "a single quote: JSON strings and names take double quotes";
  if (/\s/.test(char)) return `U+${char.charCodeAt(0).toString(16).toUpperCase().padStart(4, '0')}, white space JSON does not allow`;
  return `“${char}”`;
}

/** The first syntax error in `text`, or null when it is JSON. */
export function jsonSyntaxError(text: string): JsonSyntaxError | null {
  let at = 0;
  const fail = (message: string, offset = at): never => {
    throw new Stop(offset, message);
  };
  const space = (): void => {
    while (at < text.length && ' \t\n\r'.includes(text[at])) at += 1;
  };
  const expect = (char: string, message: string): void => {
    space();
    if (text[at] !== char) fail(message);
    at += 1;
  };

  function string(): void {
    const start = at;
    at += 1;
    for (;;) {
      if (at >= text.length) fail('This string is not closed: a double quote is missing.', start);
      const char = text[at];
      if (char === '"') {
        at += 1;
        return;
      }
      if (char === '\\') {
        ESCAPE.lastIndex = at;
        if (!ESCAPE.test(text)) fail('Not an escape JSON knows: use \\" \\\\ \\/ \\b \\f \\n \\r \\t or \\u followed by four hex digits.');
        at = ESCAPE.lastIndex;
        continue;
      }
      if (char.charCodeAt(0) < 0x20) fail(char === '\n' ? 'A line break inside a string must be written \\n.' : 'A control character inside a string must be escaped (\\t, \\u0000…).');
      at += 1;
    }
  }

  function value(depth: number): void {
    if (depth > MAX_DEPTH) fail(`Nested more than ${MAX_DEPTH} levels deep.`);
    space();
    const char = text[at];
    if (char === undefined) return fail('The text ends where a value should be.');
    if (char === '{') return members(depth);
    if (char === '[') return elements(depth);
    if (char === '"') return string();
    for (const literal of ['true', 'false', 'null']) {
      if (text.startsWith(literal, at)) {
        at += literal.length;
        return;
      }
    }
    NUMBER.lastIndex = at;
    if (/[-\d]/.test(char) && NUMBER.test(text)) {
      at = NUMBER.lastIndex;
      return;
    }
    fail(`Expected a value (a string, number, object, array, true, false or null), not ${describe(char)}.`);
  }

  /** An object's members or an array's items, each read by `item`, up to `close`. */
  function sequence(close: '}' | ']', item: () => void, says: { trailingComma: string; expected: string; unclosed: string }): void {
    at += 1;
    space();
    if (text[at] === close) {
      at += 1;
      return;
    }
    for (;;) {
      space();
      if (text[at] === close) fail(says.trailingComma);
      item();
      space();
      if (text[at] === ',') at += 1;
      else if (text[at] === close) {
        at += 1;
        return;
      } else fail(at >= text.length ? says.unclosed : says.expected);
    }
  }

  function members(depth: number): void {
    const member = (): void => {
      if (text[at] !== '"') fail('Expected a property name in double quotes.');
      string();
      expect(':', 'Expected “:” after the property name.');
      value(depth + 1);
    };
    sequence('}', member, {
      trailingComma: 'A comma before “}” must be followed by another property.',
      expected: 'Expected “,” or “}” after the property’s value.',
      unclosed: 'The object is not closed: “}” is missing.',
    });
  }

  function elements(depth: number): void {
    sequence(']', () => value(depth + 1), {
      trailingComma: 'A comma before “]” must be followed by another item.',
      expected: 'Expected “,” or “]” after the item.',
      unclosed: 'The array is not closed: “]” is missing.',
    });
  }

  try {
    value(0);
    space();
    if (at < text.length) fail('Unexpected text after the end of the JSON.');
    return null;
  } catch (error) {
    if (error instanceof Stop) return { offset: error.offset, message: error.message };
    throw error;
  }
}
