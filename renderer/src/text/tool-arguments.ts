import type { ReviewRecord } from '../api/types';
import { jsonSyntaxError } from './json-syntax';
import { editableOffset, fromEditable } from './reveal';

/**
 * What the modify editor edits. The clients' tool-call adapters (`tool-review.ts`,
 * `tool_calls.py`: Claude Code, the AI SDK, the OpenAI Agents SDK, LangGraph) file a tool call
 * with its name and input in the metadata (`tool_name`, `tool_input`) and, as the action, either
 * the one text argument a reviewer edits (a shell command) or the whole input as JSON; an edit
 * comes back the same way. Any other review's action is text the agent receives as it is.
 */
export type EditedAction =
  | { kind: 'text' }
  | { kind: 'argument'; toolName: string; argument: string }
  | { kind: 'arguments'; toolName: string; fields: ArgumentField[] };

/**
 * The metadata key for the JSON Schema of the tool's input, which the adapters that know it
 * add (`tool_input_schema`): the editor offers fields for its top-level properties.
 */
export const INPUT_SCHEMA_KEY = 'tool_input_schema';

export type Scalar = string | number | boolean;

/** A top-level property of the tool's input the editor offers a field for. */
export interface ArgumentField {
  name: string;
  type: 'string' | 'number' | 'integer' | 'boolean' | 'choice';
  /** For `choice`: the schema's `enum`. */
  options: Scalar[];
  required: boolean;
  description: string | null;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The property's one type, `["string", "null"]` read as string; null for what a field cannot edit. */
function scalarType(property: Record<string, unknown>): ArgumentField['type'] | null {
  if (Array.isArray(property.enum) && property.enum.length > 0 && property.enum.every((option) => ['string', 'number', 'boolean'].includes(typeof option))) return 'choice';
  const types = (Array.isArray(property.type) ? property.type : [property.type]).filter((type) => type !== 'null');
  return types.length === 1 && ['string', 'number', 'integer', 'boolean'].includes(types[0] as string) ? (types[0] as ArgumentField['type']) : null;
}

/** Fields for the schema's top-level string, number, integer, boolean and enum properties; others stay in the JSON. */
export function argumentFields(schema: unknown): ArgumentField[] {
  if (!isObject(schema) || !isObject(schema.properties)) return [];
  const required = Array.isArray(schema.required) ? schema.required : [];
  return Object.entries(schema.properties).flatMap(([name, property]): ArgumentField[] => {
    if (!isObject(property)) return [];
    const type = scalarType(property);
    if (!type) return [];
    const description = typeof property.description === 'string' ? property.description : typeof property.title === 'string' ? property.title : null;
    return [{ name, type, options: type === 'choice' ? (property.enum as Scalar[]) : [], required: required.includes(name), description }];
  });
}

function parsedObject(text: string): Record<string, unknown> | null {
  try {
    const value: unknown = JSON.parse(text);
    return isObject(value) ? value : null;
  } catch {
    return null;
  }
}

export function editedActionOf(review: Pick<ReviewRecord, 'proposed_action' | 'metadata'>): EditedAction {
  const { tool_name: toolName, tool_input: input } = review.metadata;
  if (typeof toolName !== 'string' || !isObject(input)) return { kind: 'text' };
  if (parsedObject(review.proposed_action)) return { kind: 'arguments', toolName, fields: argumentFields(review.metadata[INPUT_SCHEMA_KEY]) };
  const argument = Object.keys(input).find((key) => input[key] === review.proposed_action);
  return argument === undefined ? { kind: 'text' } : { kind: 'argument', toolName, argument };
}

export type ArgumentsCheck =
  | { ok: true; value: Record<string, unknown> }
  | { ok: false; message: string; /** In the editor's text, as the reviewer sees it. */ offset: number; line: number; column: number };

function kindOf(value: unknown): string {
  return Array.isArray(value) ? 'an array' : value === null ? 'null' : `a ${typeof value}`;
}

/**
 * Whether the editor's text (marks and all) is a JSON object of arguments, the only edit a
 * tool call can be run with; if not, what is wrong and where, by line and column.
 */
export function checkArguments(editable: string): ArgumentsCheck {
  const text = fromEditable(editable);
  const at = (offset: number, message: string): ArgumentsCheck => {
    const shown = editableOffset(editable, offset);
    const before = editable.slice(0, shown);
    return { ok: false, message, offset: shown, line: before.split('\n').length, column: shown - before.lastIndexOf('\n') };
  };
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    const found = jsonSyntaxError(text);
    return at(found?.offset ?? text.length, found?.message ?? (error as Error).message);
  }
  if (!isObject(value)) return at(text.length - text.trimStart().length, `The arguments must be one JSON object, { … }, not ${kindOf(value)}.`);
  return { ok: true, value };
}
