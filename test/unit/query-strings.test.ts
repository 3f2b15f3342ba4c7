import querystring from 'node:querystring';
import { describe, expect, it } from 'vitest';
import { parseQuery } from '../../server/http/params';

describe('query strings', () => {
  it('are parsed as Express parses them by default: repeated keys as lists, + as a space, odd names kept', () => {
    for (const text of ['', 'status=pending&page=2', 'q=refund+order&q=%C3%A9t%C3%A9', 'constructor=1&__proto__=2&toString=3', 'a&b=&=c']) {
      expect({ text, parsed: { ...parseQuery(text) } }).toEqual({ text, parsed: { ...querystring.parse(text) } });
    }
    expect({ ...parseQuery(undefined) }).toEqual({});
  });

  it('inherit no keys, as objects without a prototype do', () => {
    const query = parseQuery('page=1');
    for (const inherited of ['toString', 'constructor', 'hasOwnProperty', '__proto__']) expect(query[inherited]).toBeUndefined();
    expect(Object.keys(query)).toEqual(['page']);
  });
});
