import { describe, expect, it } from 'vitest';
import { jsonSyntaxError } from './json-syntax';
import { toEditable } from './reveal';
import { argumentFields, checkArguments, editedActionOf, INPUT_SCHEMA_KEY } from './tool-arguments';

describe('editedActionOf', () => {
  const input = { to: 'ops@example.com', body: 'Deploy done' };

  it('tells a tool call’s JSON arguments, one text argument of it, and plain action text apart', () => {
    expect(editedActionOf({ proposed_action: JSON.stringify(input, null, 2), metadata: { tool_name: 'sendEmail', tool_input: input } })).toEqual({
      kind: 'arguments',
      toolName: 'sendEmail',
      fields: [],
    });
    expect(editedActionOf({ proposed_action: 'git push', metadata: { tool_name: 'Bash', tool_input: { command: 'git push', description: 'Push' } } })).toEqual({
      kind: 'argument',
      toolName: 'Bash',
      argument: 'command',
    });
    expect(editedActionOf({ proposed_action: '{"a": 1}', metadata: {} })).toEqual({ kind: 'text' });
    expect(editedActionOf({ proposed_action: 'Refund EUR 250', metadata: { tool_name: 'refund' } })).toEqual({ kind: 'text' });
  });

  it('offers fields for the schema’s top-level strings, numbers, booleans and enums', () => {
    const schema = {
      type: 'object',
      required: ['to'],
      properties: {
        to: { type: 'string', description: 'Recipient' },
        retries: { type: 'integer' },
        ratio: { type: ['number', 'null'] },
        urgent: { type: 'boolean' },
        tone: { enum: ['formal', 'friendly'] },
        cc: { type: 'array', items: { type: 'string' } },
        either: { anyOf: [{ type: 'string' }, { type: 'number' }] },
      },
    };
    const edited = editedActionOf({ proposed_action: JSON.stringify(input), metadata: { tool_name: 'sendEmail', tool_input: input, [INPUT_SCHEMA_KEY]: schema } });
    expect(edited.kind === 'arguments' && edited.fields.map((field) => [field.name, field.type, field.required])).toEqual([
      ['to', 'string', true],
      ['retries', 'integer', false],
      ['ratio', 'number', false],
      ['urgent', 'boolean', false],
      ['tone', 'choice', false],
    ]);
    expect(argumentFields({ type: 'object' })).toEqual([]);
    expect(argumentFields('not a schema')).toEqual([]);
  });
});

describe('checkArguments', () => {
  it('accepts a JSON object and gives its value, hidden characters put back', () => {
    expect(checkArguments(toEditable('{"to": "a\u200Bb"}'))).toEqual({ ok: true, value: { to: 'a\u200Bb' } });
  });

  it('says what is wrong and where, by line and column of the text the reviewer sees', () => {
    expect(checkArguments('{\n  "to": "ops@example.com"\n  "body": "x"\n}')).toMatchObject({
      ok: false,
      line: 3,
      column: 3,
      message: 'Expected “,” or “}” after the property’s value.',
    });
    // The mark ⟦U+200B⟧ is one character sent but eight shown: the column is the one shown.
    expect(checkArguments('{"to": "a⟦U+200B⟧b",}')).toMatchObject({ ok: false, line: 1, column: 21, message: 'A comma before “}” must be followed by another property.' });
  });

  it('refuses JSON that is not an object', () => {
    expect(checkArguments('  ["rm", "-rf"]')).toMatchObject({ ok: false, line: 1, column: 3, message: 'The arguments must be one JSON object, { … }, not an array.' });
    expect(checkArguments('"text"')).toMatchObject({ ok: false, message: 'The arguments must be one JSON object, { … }, not a string.' });
  });
});

describe('jsonSyntaxError', () => {
  it.each([
    ['{"a": 1,}', 8, 'A comma before “}” must be followed by another property.'],
    ["{'a': 1}", 1, 'Expected a property name in double quotes.'],
    ['{"a": \'x\'}', 6, 'Expected a value (a string, number, object, array, true, false or null), not a single quote: JSON strings and names take double quotes.'],
    ['{"a": "line\nbreak"}', 11, 'A line break inside a string must be written \\n.'],
    ['{"a": "\\x"}', 7, 'Not an escape JSON knows: use \\" \\\\ \\/ \\b \\f \\n \\r \\t or \\u followed by four hex digits.'],
    ['{"a": "open', 6, 'This string is not closed: a double quote is missing.'],
    ['{"a" 1}', 5, 'Expected “:” after the property name.'],
    ['{"a": [1, 2', 11, 'The array is not closed: “]” is missing.'],
    ['{"a": [1,]}', 9, 'A comma before “]” must be followed by another item.'],
    ['{"a": 01}', 7, 'Expected “,” or “}” after the property’s value.'],
    ['{} {}', 3, 'Unexpected text after the end of the JSON.'],
    ['', 0, 'The text ends where a value should be.'],
  ])('finds the error in %j', (text, offset, message) => {
    expect(() => JSON.parse(text)).toThrow();
    expect(jsonSyntaxError(text)).toEqual({ offset, message });
  });

  it('finds none in JSON', () => {
    for (const text of ['{}', '[]', '{"a": [1, -2.5e3, true, false, null, {"b": "\\u00e9\\n"}]}', ' "x" ', '0']) expect(jsonSyntaxError(text)).toBeNull();
  });
});
