import { brotliCompressSync, deflateSync, gzipSync } from 'node:zlib';
import fc from 'fast-check';
import { type FormPart, multipartBody } from './multipart';
import type { RawRequest } from '../../support/raw-http';
import { encodeJson, JsonObject, JsonToken, nestedText, type WireJson } from './wire-json';

/** The parts of an OpenAPI 3.0 schema (or a JSON Schema, as MCP tools describe their input) the generators read. */
interface Schema {
  $ref?: string;
  type?: 'string' | 'integer' | 'number' | 'boolean' | 'object' | 'array' | 'null';
  anyOf?: Schema[];
  enum?: unknown[];
  nullable?: boolean;
  minimum?: number;
  maximum?: number;
  minLength?: number;
  maxLength?: number;
  pattern?: string;
  format?: string;
  example?: unknown;
  properties?: Record<string, Schema>;
  required?: string[];
  items?: Schema;
}

interface Parameter {
  $ref?: string;
  name: string;
  in: 'path' | 'query' | 'header' | 'cookie';
  schema: Schema;
}

interface Operation {
  parameters?: Parameter[];
  requestBody?: { content: Record<string, { schema: Schema }> };
}

export interface OpenApiDocument {
  paths: Record<string, Record<string, Operation>>;
}

export interface FuzzRequest extends RawRequest {
  /** The method sent and the path template, `POST /reviews/{review_id}/decide`: what figures and failure reports group by. */
  operation: string;
  /** Set when the client sends only this many bytes of the body and hangs up this long after, answer unread. */
  hangUp?: { afterBytes: number; afterMs: number };
  /** The request may rightly wait longer than the client cares to (an MCP tool's `wait_seconds`). */
  mayWait?: boolean;
}

/** A tool as MCP's `tools/list` describes it. */
export interface ToolDescription {
  name: string;
  inputSchema: Schema;
}

export interface FuzzTargets {
  /** Ids worth aiming at, by path parameter name: rows the server holds, or will once the fuzzer has made them. */
  knownIds: Record<string, readonly number[]>;
  /** The server's `max_attachment_bytes`, so uploads land on both sides of it. */
  maxUploadBytes: number;
}

type Weighted<T> = { weight: number; arbitrary: fc.Arbitrary<T> };

/** Mostly the well-formed case, sometimes one of the odd ones: how every choice below is weighted. */
function mostly<T>(usual: fc.Arbitrary<T>, ...odd: Array<fc.Arbitrary<T>>): fc.Arbitrary<T> {
  return fc.oneof({ weight: 6 * odd.length, arbitrary: usual }, ...odd.map((arbitrary) => ({ weight: 1, arbitrary })));
}

// ---------------------------------------------------------------------------------------------
// Values

/** Strings that have broken parsers, loggers, terminals, file systems or SQL before. */
const TRICKY_STRINGS = [
  '', ' ', '\t', '\u0000', 'a\u0000b', '\u001b[2J\u001b[31mred', 'line\r\nX-Injected: 1', '\u202egnp.exe', '\ud800', '\udfff\ud800',
  '\ufeffbom', 'e\u0301', '🙂🙂🙂', '𝕏', '\u2028\u2029', "'; DROP TABLE reviews; --", '" OR ""="', '%s%s%n', '${7*7}{{7*7}}',
  '<script>alert(1)</script>', '../../../../etc/passwd', '..\\..\\boot.ini', 'NaN', 'Infinity', '-0', '1e309', 'null', 'true',
  '[]', '{}', '__proto__', 'constructor', 'CON', '%00', '%FF', 'ﷺ'.repeat(20),
];

/** Number tokens JavaScript reads as something else (Infinity, 0, a rounded value). */
const NUMBER_TOKENS = ['1e309', '-1e309', '-0', '1.0', '1e0', '1E2', '0.1e-999', '5e-324', '9007199254740993', '123456789012345678901234567890'];

/** Values of the wrong type for any field: what a confused or hostile client sends. */
const wrongTypes: fc.Arbitrary<WireJson> = fc.oneof(
  fc.constantFrom<WireJson>(null, true, false, 0, -1, '', ' ', 'NaN', '1e309', [], [1, 'a'], new JsonObject([]), new JsonObject([['$gt', '']])),
  fc.constantFrom(...NUMBER_TOKENS).map((text) => new JsonToken(text)),
);

/** Values big or deep enough to hurt a naive parser, validator or serialiser. */
const OVERSIZED_TOKENS = [
  nestedText(5_000, 'array'),
  nestedText(5_000, 'object'),
  nestedText(33, 'object'),
  `[${'0,'.repeat(10_000)}0]`,
  `{${Array.from({ length: 10_001 }, (_, i) => `"k${i}":${i}`).join(',')}}`,
  // Not JSON at all: the whole document becomes malformed.
  'NaN', 'Infinity', 'undefined', "'single'", '0x10', '.5', '+1', '"\\ud800"', '"\\u0000"',
].map((text) => new JsonToken(text));

const FREE_FORM_KEYS = ['__proto__', 'constructor', 'prototype', 'toString', 'valueOf', 'hasOwnProperty', '', '\u0000', 'a.b', '$where', '🙂'];

const scalar: fc.Arbitrary<WireJson> = fc.oneof(
  fc.constant(null),
  fc.boolean(),
  fc.integer(),
  fc.double(),
  fc.string({ maxLength: 20 }),
  fc.constantFrom(...TRICKY_STRINGS),
  fc.constantFrom(...NUMBER_TOKENS).map((text) => new JsonToken(text)),
);

/** Free-form JSON (`metadata`), with the keys that pollute prototypes. */
const freeForm = fc.letrec<{ value: WireJson; array: WireJson[]; object: JsonObject }>((tie) => ({
  value: fc.oneof({ depthSize: 'small' }, scalar, tie('array'), tie('object')),
  array: fc.array(tie('value'), { maxLength: 4 }),
  object: fc
    .array(fc.tuple(fc.oneof(fc.constantFrom(...FREE_FORM_KEYS), fc.string({ maxLength: 12 })), tie('value')), { maxLength: 4 })
    .map((members) => new JsonObject(members)),
}));

const hostileValue: fc.Arbitrary<WireJson> = fc.oneof(wrongTypes, fc.constantFrom(...OVERSIZED_TOKENS), freeForm.value);

/** Resolves `$ref`s against the document (`#/components/schemas/Urgency`). */
function resolver(document: OpenApiDocument): <T extends { $ref?: string }>(node: T) => T {
  return function resolve<T extends { $ref?: string }>(node: T): T {
    if (!node.$ref) return node;
    const target = node.$ref
      .replace(/^#\//, '')
      .split('/')
      .reduce<unknown>((at, key) => (at as Record<string, unknown>)[key], document);
    return resolve(target as T);
  };
}

/** When a schema sets no maximum length: long enough to matter, short enough for a header or URL. */
const UNBOUNDED_TEXT = 1_000;

function stringValue(schema: Schema): fc.Arbitrary<WireJson> {
  const min = schema.minLength ?? 0;
  const max = schema.maxLength ?? UNBOUNDED_TEXT;
  const short = (unit: 'grapheme' | 'grapheme-ascii' | 'binary') => fc.string({ unit, minLength: min, maxLength: Math.max(min, Math.min(max, 40)) });
  // A length is counted in code points by the validator and in UTF-16 units or bytes elsewhere.
  const atBoundary = fc
    .tuple(fc.constantFrom(...new Set([min, max, max + 1, Math.max(min - 1, 0)])), fc.constantFrom('x', 'é', '🙂', '\u0000', ' '))
    .map(([length, unit]) => unit.repeat(length));
  const usual = schema.pattern
    ? fc.stringMatching(new RegExp(schema.pattern)).map((text) => text.slice(0, max))
    : fc.oneof(short('grapheme'), short('grapheme-ascii'), short('binary'));
  const example = typeof schema.example === 'string' ? [fc.constant(schema.example)] : [];
  return mostly<WireJson>(usual, fc.constantFrom(...TRICKY_STRINGS), atBoundary, ...example);
}

function integerValue(schema: Schema): fc.Arbitrary<WireJson> {
  const min = schema.minimum ?? -(2 ** 31);
  const max = schema.maximum ?? 2 ** 31;
  return mostly<WireJson>(
    fc.bigInt({ min: BigInt(min), max: BigInt(max) }).map(Number),
    fc.constantFrom(min, max, min - 1, max + 1, 0, -1, 2 ** 31, 2 ** 53, -(2 ** 53), 1.5),
    fc.constantFrom(...NUMBER_TOKENS).map((text) => new JsonToken(text)),
  );
}

function numberValue(schema: Schema): fc.Arbitrary<WireJson> {
  const min = schema.minimum ?? -1e6;
  const max = schema.maximum ?? 1e6;
  return mostly<WireJson>(
    fc.double({ min, max, noNaN: true }),
    fc.constantFrom(min, max, max + 1e-9, min - 1e-9, -0, 5e-324),
    fc.constantFrom(...NUMBER_TOKENS).map((text) => new JsonToken(text)),
  );
}

function enumValue(values: unknown[]): fc.Arbitrary<WireJson> {
  const near = values.flatMap((value) => [String(value).toUpperCase(), ` ${String(value)}`]);
  return mostly<WireJson>(fc.constantFrom(...(values as WireJson[])), fc.constantFrom(...near, ''));
}

// ---------------------------------------------------------------------------------------------
// Bodies

const INVALID_UTF8 = [[0xff], [0x80], [0xc3, 0x28], [0xc0, 0x80], [0xed, 0xa0, 0x80], [0xf4, 0x90, 0x80, 0x80], [0xe2, 0x82]].map((bytes) => Buffer.from(bytes));

/** Whole bodies that are not what any endpoint expects. */
const HOSTILE_BODIES = [
  '', ' ', 'null', 'true', '0', '"x"', '[]', '{', '{"a":', '{"a":1,}', "{'a':1}", '{"a":1}{"b":2}', '\ufeff{}', '\u0000',
  nestedText(5_000, 'object'),
  nestedText(5_000, 'array'),
  nestedText(100_000, 'array'),
  `{"proposed_action":"${'x'.repeat(1024 * 1024)}"}`,
].map((text) => Buffer.from(text));

/** A valid document with bytes cut off, or with bytes that are not UTF-8 slipped in. */
function damaged(document: fc.Arbitrary<Buffer>): fc.Arbitrary<Buffer> {
  return fc.oneof(
    fc.tuple(document, fc.nat()).map(([bytes, at]) => bytes.subarray(0, at % Math.max(bytes.length, 1))),
    fc
      .tuple(document, fc.nat(), fc.constantFrom(...INVALID_UTF8))
      .map(([bytes, at, bad]) => Buffer.concat([bytes.subarray(0, at % (bytes.length + 1)), bad, bytes.subarray(at % (bytes.length + 1))])),
  );
}

type Mutation = (members: ReadonlyArray<readonly [string, WireJson]>, at: number, value: WireJson, key: string) => Array<readonly [string, WireJson]>;

/** One change to a well-formed object: what a client with a bug or a stale schema does. */
const MUTATIONS: Mutation[] = [
  // drop a field (a required one, sometimes)
  (members, at) => members.filter((_, i) => i !== at),
  // send a field twice, the second time with another value
  (members, at, value) => [...members, [members[at][0], value]],
  // give a field a value of the wrong type
  (members, at, value) => members.map((member, i) => (i === at ? [member[0], value] : member)),
  // add a field the schema does not know
  (members, _at, value, key) => [...members, [key, value]],
];

/** Values for the schemas of one document. */
class SchemaValues {
  readonly resolve: ReturnType<typeof resolver>;

  constructor(document: OpenApiDocument) {
    this.resolve = resolver(document);
  }

  valid(schema: Schema): fc.Arbitrary<WireJson> {
    const resolved = this.resolve(schema);
    const value = this.ofType(resolved);
    return resolved.nullable ? mostly<WireJson>(value, fc.constant(null)) : value;
  }

  /**
   * A field's value: valid mostly, of a wrong type or size now and then. Rarely enough that a
   * good share of bodies is accepted whole, so the fuzzer also reaches what happens after validation.
   */
  field(schema: Schema): fc.Arbitrary<WireJson> {
    return fc.oneof({ weight: 14, arbitrary: this.valid(schema) }, { weight: 1, arbitrary: hostileValue });
  }

  object(schema: Schema): fc.Arbitrary<JsonObject> {
    const resolved = this.resolve(schema);
    if (!resolved.properties) return freeForm.object;
    const required = new Set(resolved.required ?? []);
    const members = Object.entries(resolved.properties).map(([name, property]) => {
      const member = this.field(property).map((value) => [name, value] as const);
      return required.has(name) ? member : fc.option(member, { nil: undefined });
    });
    return fc.tuple(...members).map((chosen) => new JsonObject(chosen.filter((member) => member !== undefined)));
  }

  /** An object with one mutation: a field dropped, duplicated, retyped, or one the schema does not know. */
  mutated(schema: Schema): fc.Arbitrary<JsonObject> {
    const names = Object.keys(this.resolve(schema).properties ?? {});
    const unknownKey = fc.oneof(
      fc.constantFrom('__proto__', 'constructor', 'prototype', 'id', 'status', 'decision', 'created_at'),
      fc.constantFrom(...names, 'x').map((name) => `${name}s`),
      fc.constantFrom(...names, 'x').map((name) => name.toUpperCase()),
    );
    return fc
      .tuple(this.object(schema), fc.constantFrom(...MUTATIONS), fc.nat(), hostileValue, unknownKey)
      .map(([object, mutate, at, value, key]) =>
        new JsonObject(object.members.length === 0 ? [[key, value]] : mutate(object.members, at % object.members.length, value, key)),
      );
  }

  json(schema: Schema): fc.Arbitrary<Buffer> {
    const document = fc
      .oneof(
        { weight: 5, arbitrary: this.object(schema) },
        { weight: 3, arbitrary: this.mutated(schema) },
        { weight: 1, arbitrary: hostileValue },
      )
      .map((value) => Buffer.from(encodeJson(value)));
    return mostly(document, damaged(document), fc.constantFrom(...HOSTILE_BODIES));
  }

  private ofType(schema: Schema): fc.Arbitrary<WireJson> {
    if (schema.enum) return enumValue(schema.enum);
    if (schema.anyOf) return fc.oneof(...schema.anyOf.map((option) => this.valid(option)));
    switch (schema.type) {
      case 'null':
        return fc.constant(null);
      case 'string':
        return stringValue(schema);
      case 'integer':
        return integerValue(schema);
      case 'number':
        return numberValue(schema);
      case 'boolean':
        return mostly<WireJson>(fc.boolean(), fc.constantFrom('true', 1, 0, 'yes'));
      case 'array':
        return fc.array(this.field(schema.items ?? {}), { maxLength: 5 });
      default:
        return this.object(schema);
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Uploads

const FILE_NAMES = [
  'receipt.png', '../../../../etc/passwd', '..\\..\\windows\\win.ini', 'a/b/c.txt', `${'x'.repeat(300)}.png`, '.htaccess',
  'file.php%00.png', 'say "cheese".jpg', 'name\r\nX-Injected: 1', '🙂.txt', 'e\u0301.txt', '\u202egnp.exe', ...TRICKY_STRINGS,
];
const FILE_TYPES = [
  'image/png', 'text/html', 'image/svg+xml', 'application/pdf', 'text/plain; charset=utf-8', 'application/x-msdownload', '',
  'x/y/z', '../../', `${'a'.repeat(300)}/b`, 'IMAGE/PNG', 'text/plain; charset="\u00ff"',
];
const BOUNDARY = 'chaos-7MA4YWxkTrZu0gW';
const UPLOAD_CONTENT_TYPES = [
  'multipart/form-data', 'multipart/form-data; boundary=another', `multipart/form-data; boundary="${BOUNDARY}"`,
  `multipart/mixed; boundary=${BOUNDARY}`, `MULTIPART/FORM-DATA; boundary=${BOUNDARY}`, 'application/json', 'application/octet-stream',
];

/** What a broken uploader sends instead of one `file` part: none, two, a renamed one, an extra field. */
const PART_MUTATIONS: Array<(parts: FormPart[], extra: FormPart) => FormPart[]> = [
  (parts) => parts.filter((part) => part.fileName === undefined),
  (parts) => [...parts, ...parts],
  (parts) => parts.map((part) => ({ ...part, name: part.name === 'file' ? 'files' : part.name })),
  (parts, extra) => [...parts, extra],
  (parts) => parts.map((part) => ({ name: part.name, content: part.content })),
];

function uploadBody(values: SchemaValues, schema: Schema, maxUploadBytes: number): fc.Arbitrary<{ body: Buffer; contentType: string }> {
  const properties = Object.entries(values.resolve(schema).properties ?? {});
  const content = mostly(
    fc.uint8Array({ maxLength: 2_048 }).map((bytes) => Buffer.from(bytes)),
    fc.constantFrom(Buffer.alloc(0), Buffer.alloc(maxUploadBytes, 1), Buffer.alloc(maxUploadBytes + 1, 2)),
  );
  const partFor = ([name, property]: [string, Schema]): fc.Arbitrary<FormPart> =>
    property.format === 'binary'
      ? fc.record({ fileName: fc.constantFrom(...FILE_NAMES), contentType: fc.constantFrom(...FILE_TYPES), content }).map((file) => ({ name, ...file }))
      : values.field(property).map((value) => ({ name, content: textOf(value) }));
  const parts: fc.Arbitrary<FormPart[]> = fc.tuple(...properties.map(partFor));
  const extra = fc.record({ name: fc.constantFrom('__proto__', 'other', 'FILE', ''), content: fc.string({ maxLength: 20 }) });
  const mutatedParts = fc.tuple(parts, fc.constantFrom(...PART_MUTATIONS), extra).map(([all, mutate, field]) => mutate(all, field));
  const document = mostly(parts, mutatedParts).map((all) => multipartBody(all, BOUNDARY));
  return fc.record({
    body: mostly(document, damaged(document), fc.constantFrom(...HOSTILE_BODIES)),
    contentType: mostly(fc.constant(`multipart/form-data; boundary=${BOUNDARY}`), fc.constantFrom(...UPLOAD_CONTENT_TYPES)),
  });
}

// ---------------------------------------------------------------------------------------------
// Requests

const JSON_CONTENT_TYPES = [
  'application/json; charset=utf-8', 'APPLICATION/JSON', 'application/json; charset=utf-16le', 'application/json; charset=latin1',
  'application/json; charset="bogus"', 'application/json;;', 'text/plain', 'text/json', 'application/x-www-form-urlencoded',
  `multipart/form-data; boundary=${BOUNDARY}`, 'application/merge-patch+json', '*/*', '',
];

/** Eight megabytes of zeros in a few kilobytes. */
const GZIP_BOMB = gzipSync(Buffer.alloc(8 * 1024 * 1024));

/** How a body is encoded on the way, including encodings it claims but does not use. */
const ENCODINGS: Array<[string, (body: Buffer) => Buffer]> = [
  ['gzip', gzipSync],
  ['deflate', deflateSync],
  ['br', brotliCompressSync],
  ['identity', (body) => body],
  ['gzip', (body) => body],
  ['br', (body) => body],
  ['x-unknown', (body) => body],
  ['gzip, gzip', (body) => gzipSync(gzipSync(body))],
  ['gzip', () => GZIP_BOMB],
];

/** Path parameter values as written in a URL (already percent-encoded where need be). */
const ODD_PATH_VALUES = [
  '0', '-1', '-0', '1.5', '1e3', '1E0', '0x1', '0b1', '0o7', '01', '+1', '%201', '1%20', '%091', '2147483648', '9007199254740991',
  '9007199254740992', '9007199254740993', '99999999999999999999999', '1e309', 'NaN', 'Infinity', '-Infinity', 'null', 'undefined',
  'true', '%5B%5D', '%00', '1%00', '..', '.', '%2e%2e', '..%2F..%2Fhealth', '%2F', '%5C', '%FF', '%C3%28', '%E0%A4%A', '%', '%%',
  '%EF%BC%91', '%D9%A1', '__proto__', 'constructor', 'x'.repeat(2_000), '1;DROP%20TABLE%20reviews', "1'OR'1'='1", '1,2', '1&2',
];

/** Query fragments that are not `name=value` as a parser expects it. */
const ODD_QUERY_PARTS = ['%', '%zz', '%FF', '%C3%28', '%00', '+', '&', '=', '==', 'page', 'page[]=1', 'page[a]=1', '__proto__=1', 'constructor=1', 'pageSize=5', 'limit=1'];

const METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'];

/** Every byte but the unreserved ones escaped, lone surrogates included (encodeURIComponent throws on those). */
function percentEncode(text: string): string {
  return [...Buffer.from(text, 'utf8')].map((byte) => (/[A-Za-z0-9\-._~]/.test(String.fromCharCode(byte)) ? String.fromCharCode(byte) : `%${byte.toString(16).toUpperCase().padStart(2, '0')}`)).join('');
}

function textOf(value: WireJson): string {
  return typeof value === 'string' ? value : encodeJson(value);
}

/** Node refuses to send control characters or anything past U+00FF in a header. */
function headerText(value: WireJson): string {
  return textOf(value).replace(/[^\t\x20-\x7e\x80-\xff]/g, '').slice(0, 4_000);
}

interface Parts {
  pathValues: Record<string, string>;
  query: string[];
  headers: Record<string, string>;
  body?: Buffer;
}

/** Values for an operation's parameters, of the right type mostly; queries and headers stay small enough for a request line. */
function parameterParts(values: SchemaValues, parameters: Parameter[], targets: FuzzTargets): fc.Arbitrary<Omit<Parts, 'body'>> {
  const small = (schema: Schema) => mostly(values.valid(schema), wrongTypes);
  const path = parameters.filter((p) => p.in === 'path');
  const query = parameters.filter((p) => p.in === 'query');
  const header = parameters.filter((p) => p.in === 'header');
  const pathValue = (parameter: Parameter): fc.Arbitrary<string> => {
    const known = (targets.knownIds[parameter.name] ?? []).map(String);
    return fc.oneof(
      ...(known.length > 0 ? [{ weight: 5, arbitrary: fc.constantFrom(...known) }] : []),
      { weight: 2, arbitrary: small(parameter.schema).map((value) => percentEncode(textOf(value))) },
      { weight: 3, arbitrary: fc.constantFrom(...ODD_PATH_VALUES) },
    );
  };
  const queryPart = (parameter: Parameter) =>
    fc.option(small(parameter.schema).map((value) => `${parameter.name}=${percentEncode(textOf(value))}`), { nil: undefined, freq: 2 });
  return fc.record({
    pathValues: fc.tuple(...path.map(pathValue)).map((chosen) => Object.fromEntries(path.map((p, i) => [p.name, chosen[i]]))),
    query: fc
      .tuple(fc.tuple(...query.map(queryPart)), mostly(fc.constant<string[]>([]), fc.constantFrom(...ODD_QUERY_PARTS).map((part) => [part])), mostly(fc.constant(false), fc.constant(true)))
      .map(([chosen, odd, repeat]) => {
        const parts = [...chosen.filter((part) => part !== undefined), ...odd];
        return repeat && parts.length > 0 ? [...parts, parts[0]] : parts;
      }),
    headers: fc
      .tuple(...header.map((p) => fc.option(small(p.schema).map(headerText), { nil: undefined, freq: 2 })))
      .map((chosen) => Object.fromEntries(header.flatMap((p, i) => (chosen[i] === undefined ? [] : [[p.name.toLowerCase(), chosen[i]]])))),
  });
}

/** Body and its headers (type and encoding) for an operation that takes one. */
function bodyParts(values: SchemaValues, operation: Operation, targets: FuzzTargets): fc.Arbitrary<Pick<Parts, 'body' | 'headers'>> {
  const content = operation.requestBody?.content ?? {};
  if (content['multipart/form-data']) {
    return uploadBody(values, content['multipart/form-data'].schema, targets.maxUploadBytes).map(({ body, contentType }) => ({ body, headers: { 'content-type': contentType } }));
  }
  if (!content['application/json']) return mostly(fc.constant({ headers: {} }), values.json({}).map((body) => ({ body, headers: { 'content-type': 'application/json' } })));
  return fc
    .record({
      body: values.json(content['application/json'].schema),
      type: mostly(fc.constant<string | undefined>('application/json'), fc.constantFrom(...JSON_CONTENT_TYPES), fc.constant(undefined)),
      encoding: fc.oneof({ weight: 20, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary: fc.constantFrom(...ENCODINGS) }),
    })
    .map(({ body, type, encoding }) => ({
      body: encoding ? encoding[1](body) : body,
      headers: { ...(type === undefined ? {} : { 'content-type': type }), ...(encoding ? { 'content-encoding': encoding[0] } : {}) },
    }));
}

/** The path as written, sometimes spelled differently: the routers must agree on what it names. */
const pathSpelling: fc.Arbitrary<(path: string) => string> = mostly(
  fc.constant((path: string) => path),
  fc.constantFrom(
    (path: string) => `${path}/`,
    (path: string) => `/${path}`,
    (path: string) => path.toUpperCase(),
    (path: string) => `${path};x=1`,
  ),
);

function operationRequest(values: SchemaValues, template: string, method: string, operation: Operation, targets: FuzzTargets): fc.Arbitrary<FuzzRequest> {
  const parameters = (operation.parameters ?? []).map((p) => values.resolve(p));
  return fc
    .record({
      parameters: parameterParts(values, parameters, targets),
      body: bodyParts(values, operation, targets),
      spell: pathSpelling,
      method: mostly(fc.constant(method.toUpperCase()), fc.constantFrom(...METHODS)),
    })
    .map(({ parameters: { pathValues, query, headers }, body, spell, method: sentMethod }) => {
      const path = template.replace(/\{(\w+)\}/g, (_, name: string) => pathValues[name]);
      return {
        operation: `${sentMethod} ${template}`,
        method: sentMethod,
        path: spell(path) + (query.length > 0 ? `?${query.join('&')}` : ''),
        headers: { ...headers, ...body.headers },
        body: body.body,
      };
    });
}

const VALID_INITIALIZE = new JsonObject([
  ['jsonrpc', '2.0'],
  ['id', 1],
  ['method', 'initialize'],
  ['params', new JsonObject([['protocolVersion', '2025-03-26'], ['capabilities', new JsonObject([])], ['clientInfo', new JsonObject([['name', 'chaos'], ['version', '1']])]])],
]);

/** `/mcp` is JSON-RPC and outside the OpenAPI document: messages of the protocol's shape, garbled. */
function mcpRequest(values: SchemaValues): fc.Arbitrary<FuzzRequest> {
  const message = fc
    .record({
      jsonrpc: mostly<WireJson>(fc.constant('2.0'), wrongTypes),
      id: fc.oneof(fc.integer(), fc.string({ maxLength: 8 }), fc.constant(null)),
      method: fc.oneof(fc.constantFrom('initialize', 'ping', 'tools/list', 'tools/call', 'notifications/initialized'), fc.string({ maxLength: 12 })),
      params: freeForm.value,
    })
    .map((fields) => new JsonObject(Object.entries(fields)));
  const body = fc
    .oneof(message, fc.array(message, { maxLength: 3 }), fc.constant(VALID_INITIALIZE), hostileValue)
    .map((value) => Buffer.from(encodeJson(value)));
  return fc
    .record({
      method: mostly(fc.constant('POST'), fc.constantFrom('GET', 'DELETE')),
      body: mostly(body, damaged(body), values.json({})),
      accept: fc.constantFrom('application/json, text/event-stream', 'application/json', '*/*', undefined),
      session: fc.option(fc.oneof(fc.uuid(), fc.constantFrom('', 'x', '../', '%00')), { nil: undefined }),
    })
    .map(({ method, body: sent, accept, session }) => ({
      operation: `${method} /mcp`,
      method,
      path: '/mcp',
      headers: {
        'content-type': 'application/json',
        ...(accept === undefined ? {} : { accept }),
        ...(session === undefined ? {} : { 'mcp-session-id': session }),
      },
      body: method === 'POST' ? sent : undefined,
    }));
}

/** Paths no route serves, with any method. */
const unknownPathRequest: fc.Arbitrary<FuzzRequest> = fc
  .record({
    method: fc.constantFrom(...METHODS),
    path: fc.constantFrom('/', '/nope', '/reviews/1/nope', '/reviews/1/decide/extra', '/attachments', '/reviews/1/attachments/1', '/%2e%2e/%2e%2e/etc/passwd', '/reviews/%2F..%2F..%2F'),
  })
  .map(({ method, path }) => ({ operation: `${method} (no route)`, method, path, headers: {} }));

/**
 * `tools/call` requests in an open MCP session, with arguments generated from each tool's
 * input schema as a body's are from the OpenAPI document, and tool names slightly wrong.
 */
export function toolCallArbitrary(tools: ToolDescription[], sessionId: string): fc.Arbitrary<FuzzRequest> {
  const values = new SchemaValues({ paths: {} });
  const requestFor = (tool: ToolDescription): fc.Arbitrary<FuzzRequest> => {
    const body = fc
      .record({
        name: mostly(fc.constant(tool.name), fc.constantFrom(`${tool.name}s`, tool.name.toUpperCase(), '', '__proto__')),
        arguments: fc.oneof(
          { weight: 5, arbitrary: values.object(tool.inputSchema) },
          { weight: 2, arbitrary: values.mutated(tool.inputSchema) },
          { weight: 1, arbitrary: hostileValue },
        ),
        // Unique, as MCP requires of a session's requests: a repeated id leaves the first call unanswered.
        id: fc.uuid(),
      })
      .map(({ name, arguments: args, id }) => new JsonObject([['jsonrpc', '2.0'], ['id', id], ['method', 'tools/call'], ['params', new JsonObject([['name', name], ['arguments', args]])]]))
      .map((message) => Buffer.from(encodeJson(message)));
    return mostly(body, damaged(body)).map((sent) => ({
      operation: `POST /mcp tools/call ${tool.name}`,
      method: 'POST',
      path: '/mcp',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-session-id': sessionId },
      body: sent,
      mayWait: true,
    }));
  };
  return fc.oneof(...tools.map(requestFor));
}

/** One request in twenty is abandoned by its client part-way through the body, or while it waits for the answer. */
const hangUp = fc.oneof(
  { weight: 19, arbitrary: fc.constant(undefined) },
  { weight: 1, arbitrary: fc.record({ afterBytes: fc.nat(), afterMs: fc.constantFrom(0, 5, 50) }) },
);

/**
 * Requests to every operation of the OpenAPI document, to `/mcp` and to paths no route serves.
 * Operations with a body get a larger share: bodies have the most room for surprises.
 */
export function requestArbitrary(document: OpenApiDocument, targets: FuzzTargets): fc.Arbitrary<FuzzRequest> {
  const values = new SchemaValues(document);
  const operations: Array<Weighted<FuzzRequest>> = Object.entries(document.paths).flatMap(([template, methods]) =>
    Object.entries(methods).map(([method, operation]) => ({
      weight: operation.requestBody ? 3 : template === '/reviews' ? 2 : 1,
      arbitrary: operationRequest(values, template, method, operation, targets),
    })),
  );
  const request = fc.oneof(...operations, { weight: 1, arbitrary: mcpRequest(values) }, { weight: 1, arbitrary: unknownPathRequest });
  return fc
    .tuple(request, hangUp)
    .map(([sent, giveUp]) => (giveUp ? { ...sent, hangUp: { ...giveUp, afterBytes: giveUp.afterBytes % ((sent.body?.length ?? 0) + 1) } } : sent));
}
