import { z } from 'zod';
import type { ReviewInput } from '../domain/reviews/records';
import { openApiDocument } from '../http/openapi/document';

/** What `POST /reviews` takes: a review's fields, and whether to wait for the decision. */
export type ReviewCreate = ReviewInput & { blocking?: boolean };

/** Each field of ReviewCreate as a zod schema (test/unit/api-records.test.ts holds ReviewInput to the document's ReviewCreate). */
export type ReviewCreateFields = { [Field in keyof ReviewCreate]-?: z.ZodType<ReviewCreate[Field]> };

/** An OpenAPI 3.0 schema object, in the keywords ReviewCreate's properties use. */
interface OpenApiSchema {
  $ref?: string;
  type?: string;
  enum?: string[];
  minLength?: number;
  maxLength?: number;
  minimum?: number;
  maximum?: number;
  nullable?: boolean;
  additionalProperties?: boolean;
  description?: string;
  default?: unknown;
  example?: unknown;
}

interface ObjectSchema {
  properties: Record<string, OpenApiSchema>;
  required?: string[];
}

/**
 * The keywords translated below. `default` and `example` only document: a field left out is left
 * out of the review, for the API to apply its default. Any other keyword stops the tools from
 * being made, rather than leaving the tool looser than the API.
 */
const TRANSLATED = new Set(['$ref', 'type', 'enum', 'minLength', 'maxLength', 'minimum', 'maximum', 'nullable', 'additionalProperties', 'description', 'default', 'example']);

/** A bound as an agent reads it: a fraction's with a decimal point, so 0.0 to 1.0 is not read as 0 or 1. */
function bound(value: number, type: string): string {
  return type === 'number' && Number.isInteger(value) ? value.toFixed(1) : String(value);
}

/** What a number out of range is told: "confidence_score must be between 0.0 and 1.0". */
function rangeError(name: string, type: string, { minimum, maximum }: OpenApiSchema): string {
  const from = minimum === undefined ? undefined : bound(minimum, type);
  const to = maximum === undefined ? undefined : bound(maximum, type);
  if (from !== undefined && to !== undefined) return `${name} must be between ${from} and ${to}`;
  return from !== undefined ? `${name} must be at least ${from}` : `${name} must be at most ${to}`;
}

function resolved(schema: OpenApiSchema, schemas: Record<string, OpenApiSchema>): OpenApiSchema {
  if (schema.$ref === undefined) return schema;
  const target = schemas[schema.$ref.replace('#/components/schemas/', '')];
  if (!target) throw new Error(`the OpenAPI document has no schema ${schema.$ref}`);
  return target;
}

/** One property's value as zod checks it, its errors naming the field `name` as the caller sent it. */
function valueSchema(name: string, schema: OpenApiSchema): z.ZodType {
  const { type } = schema;
  if (schema.enum) return z.enum(schema.enum, { error: `${name} must be one of: ${schema.enum.join(', ')}` });
  if (type === 'string') {
    let text = z.string();
    if (schema.minLength !== undefined) text = text.min(schema.minLength);
    if (schema.maxLength !== undefined) text = text.max(schema.maxLength);
    return text;
  }
  if (type === 'number' || type === 'integer') {
    let number = type === 'integer' ? z.number().int() : z.number();
    if (schema.minimum !== undefined) number = number.min(schema.minimum, { error: rangeError(name, type, schema) });
    if (schema.maximum !== undefined) number = number.max(schema.maximum, { error: rangeError(name, type, schema) });
    return number;
  }
  if (type === 'boolean') return z.boolean();
  if (type === 'object' && schema.additionalProperties === true) return z.record(z.string(), z.unknown());
  throw new Error(`${name}: the MCP tools cannot translate an OpenAPI schema of type ${String(type)}`);
}

/** The property `field` of ReviewCreate, as a zod schema whose errors name it `name`. */
function propertySchema(field: string, name: string): z.ZodType {
  const { properties, required } = reviewCreateSchema();
  const schema = properties[field];
  const untranslated = Object.keys(schema).filter((keyword) => !TRANSLATED.has(keyword));
  if (untranslated.length > 0) throw new Error(`${field}: the MCP tools do not translate the OpenAPI keywords ${untranslated.join(', ')}`);
  let property = valueSchema(name, schema);
  if (schema.nullable) property = property.nullable();
  if (!required?.includes(field)) property = property.optional();
  return schema.description === undefined ? property : property.describe(schema.description);
}

let reviewCreate: ObjectSchema | undefined;

/** The document's ReviewCreate, its references resolved, read once per process. */
function reviewCreateSchema(): ObjectSchema {
  if (!reviewCreate) {
    const { schemas } = (openApiDocument() as { components: { schemas: Record<string, OpenApiSchema> } }).components;
    const { properties, required } = schemas.ReviewCreate as ObjectSchema;
    reviewCreate = { required, properties: Object.fromEntries(Object.entries(properties).map(([field, schema]) => [field, resolved(schema, schemas)])) };
  }
  return reviewCreate;
}

/**
 * The fields of `request_review` that `POST /reviews` takes, made from the REST API's ReviewCreate
 * schema: its properties, limits, enums, which may be null and which left out, and their
 * descriptions. So the tool accepts what the API accepts, and describes it in the same words.
 */
export function reviewCreateFields(): ReviewCreateFields {
  const fields = Object.keys(reviewCreateSchema().properties).map((field) => [field, propertySchema(field, field)]);
  // The document and ReviewCreate's type are held to each other by test/unit/api-records.test.ts.
  return Object.fromEntries(fields) as ReviewCreateFields;
}

/** A field of ReviewCreate under another name (an alias MCP accepts): the same rules, its errors naming the alias. */
export function reviewCreateField<Field extends keyof ReviewCreate>(field: Field, name: string): z.ZodType<ReviewCreate[Field]> {
  return propertySchema(field, name) as z.ZodType<ReviewCreate[Field]>;
}
