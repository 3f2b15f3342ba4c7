/**
 * Routing rules' and workflows' conditions as the console's form holds them: one row per
 * condition (a field, an operator, a value as typed), to and from the object the API takes. The
 * fields and operators are the document's (`RoutingField`, `RoutingOperator`), which are the
 * engine's own, so the form offers exactly what the API accepts.
 */
import type { Schemas } from './types';

export type ConditionField = Schemas['RoutingField'];
export type ConditionOperator = Schemas['RoutingOperator'];
export type Conditions = Schemas['RoutingConditions'];

/** A row's field: one of the review's own, or `metadata` with a path of keys beside it. */
export type RowField = ConditionField | 'metadata';

export interface ConditionRow {
  field: RowField;
  /** For `metadata`: the keys below it, dotted (`amount`, `customer.tier`). */
  path: string;
  operator: ConditionOperator;
  /** As typed: see `valueOf`. */
  value: string;
}

/**
 * How the form reads a value typed for a field: always as text, or as a number or true/false
 * where it looks like one. Keyed by the document's enum, so the compiler holds the list to it.
 */
const FIELDS: Record<ConditionField, { label: string; typed: 'text' | 'inferred' }> = {
  task_type: { label: 'Task type', typed: 'text' },
  proposed_action: { label: 'Proposed action', typed: 'text' },
  agent_reasoning: { label: "Agent's reasoning", typed: 'text' },
  urgency: { label: 'Urgency', typed: 'text' },
  confidence_score: { label: 'Confidence score', typed: 'inferred' },
  framework: { label: 'Framework', typed: 'text' },
  agent_id: { label: 'Agent ID', typed: 'inferred' },
  organization_id: { label: 'Organization ID', typed: 'inferred' },
};

export const FIELD_CHOICES: ReadonlyArray<{ value: RowField; label: string }> = [
  ...(Object.entries(FIELDS) as Array<[ConditionField, { label: string }]>).map(([value, { label }]) => ({ value, label })),
  { value: 'metadata', label: 'Metadata…' },
];

/** The operators in the order the form offers them, each as its option reads. */
export const OPERATORS: Record<ConditionOperator, string> = {
  '=': '= is',
  '!=': '≠ is not',
  '>': '> more than',
  '>=': '≥ at least',
  '<': '< less than',
  '<=': '≤ at most',
  in: 'is one of',
  not_in: 'is none of',
  contains: 'contains',
  matches: 'matches pattern',
};

const LIST_OPERATORS: ReadonlySet<ConditionOperator> = new Set(['in', 'not_in']);

type Scalar = string | number | boolean;

export function newConditionRow(): ConditionRow {
  return { field: 'task_type', path: '', operator: '=', value: '' };
}

function isField(path: string): path is ConditionField {
  return Object.hasOwn(FIELDS, path);
}

function isScalar(value: unknown): value is Scalar {
  return typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean';
}

const NUMBER = /^-?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$/;

/** Whether `text` reads as something other than itself where values are inferred. */
function readsAsOther(text: string): boolean {
  return text !== text.trim() || text === '' || text === 'true' || text === 'false' || NUMBER.test(text) || text.startsWith('"') || text.startsWith('[');
}

/** A scalar as the form shows it: quoted (as JSON) where it would otherwise be read as something else. */
function scalarText(value: Scalar, typed: 'text' | 'inferred', inList: boolean): string {
  if (typeof value !== 'string') return String(value);
  const ambiguous = typed === 'inferred' ? readsAsOther(value) : value === '' || value !== value.trim() || value.startsWith('"');
  return ambiguous || (inList && value.includes(',')) ? JSON.stringify(value) : value;
}

function typingOf(row: Pick<ConditionRow, 'field'>): 'text' | 'inferred' {
  return row.field === 'metadata' ? 'inferred' : FIELDS[row.field].typed;
}

/** A value the API holds, as the form shows it in a row of this field and operator. */
function valueText(value: unknown, row: Pick<ConditionRow, 'field' | 'operator'>): string {
  const typed = typingOf(row);
  if (Array.isArray(value) && value.every(isScalar)) {
    const items = value.map((item) => scalarText(item, typed, true));
    return items.some((item) => item.startsWith('[')) ? JSON.stringify(value) : items.join(', ');
  }
  if (isScalar(value)) return row.operator === 'matches' ? String(value) : scalarText(value, typed, false);
  return JSON.stringify(value);
}

/** The rows of a stored rule's conditions, in the order they were written. */
export function rowsOf(conditions: Conditions): ConditionRow[] {
  return Object.entries(conditions).map(([key, raw]) => {
    const [field, path]: [RowField, string] = isField(key) ? [key, ''] : ['metadata', key.replace(/^metadata\./, '')];
    let operator: ConditionOperator = Array.isArray(raw) ? 'in' : '=';
    let value: unknown = raw;
    if (raw !== null && typeof raw === 'object' && !Array.isArray(raw) && 'operator' in raw) {
      ({ operator, value } = raw as { operator: ConditionOperator; value: unknown });
    }
    return { field, path, operator, value: valueText(value, { field, operator }) };
  });
}

export type Parsed<T> = { ok: true; value: T } | { ok: false; error: string };

function scalarOf(text: string, typed: 'text' | 'inferred'): Parsed<Scalar> {
  const trimmed = text.trim();
  if (trimmed === '') return { ok: false, error: 'needs a value' };
  if (trimmed.startsWith('"')) {
    try {
      const quoted: unknown = JSON.parse(trimmed);
      if (typeof quoted === 'string') return { ok: true, value: quoted };
    } catch {
      // Said below, in the form's words.
    }
    return { ok: false, error: `${trimmed} opens a quote it does not close as JSON text ("like this")` };
  }
  if (typed === 'text') return { ok: true, value: trimmed };
  if (trimmed === 'true' || trimmed === 'false') return { ok: true, value: trimmed === 'true' };
  return { ok: true, value: NUMBER.test(trimmed) ? Number(trimmed) : trimmed };
}

function listOf(text: string, typed: 'text' | 'inferred'): Parsed<Scalar[]> {
  const trimmed = text.trim();
  if (trimmed.startsWith('[')) {
    try {
      const list: unknown = JSON.parse(trimmed);
      if (Array.isArray(list) && list.length > 0 && list.every(isScalar)) return { ok: true, value: list };
    } catch {
      // Said below, in the form's words.
    }
    return { ok: false, error: 'a list in brackets must be a JSON list of texts, numbers or true/false' };
  }
  const items: Scalar[] = [];
  // Items split at commas outside quotes: "a, b", c is two items.
  for (const item of trimmed.match(/"(?:[^"\\]|\\.)*"|[^,]+/g) ?? []) {
    if (item.trim() === '') continue;
    const parsed = scalarOf(item, typed);
    if (!parsed.ok) return parsed;
    items.push(parsed.value);
  }
  return items.length > 0 ? { ok: true, value: items } : { ok: false, error: 'needs at least one value, separated by commas' };
}

/**
 * A row's value as the API takes it. A list operator takes values separated by commas; `matches`
 * takes the pattern as typed; the review's text fields take text; metadata and numeric fields
 * read numbers and true/false as such. Text in double quotes is always text (`"42"`).
 */
export function valueOf(row: ConditionRow): Parsed<Scalar | Scalar[]> {
  if (LIST_OPERATORS.has(row.operator)) return listOf(row.value, typingOf(row));
  if (row.operator === 'matches') return row.value.trim() === '' ? { ok: false, error: 'needs a regular expression' } : { ok: true, value: row.value };
  return scalarOf(row.value, typingOf(row));
}

/** The key a row's condition is stored under: the field, or `metadata.<path>`. */
export function keyOf(row: Pick<ConditionRow, 'field' | 'path'>): string {
  return row.field === 'metadata' ? `metadata.${row.path.trim().replace(/^metadata\./, '')}` : row.field;
}

/** The conditions object the API takes, or the first row's problem (numbered from 1). */
export function conditionsOf(rows: readonly ConditionRow[]): Parsed<Conditions> {
  const conditions: Conditions = {};
  for (const [index, row] of rows.entries()) {
    const where = `Condition ${index + 1}`;
    if (row.field === 'metadata' && !/^[^.\s]+(\.[^.\s]+)*$/.test(row.path.trim().replace(/^metadata\./, ''))) {
      return { ok: false, error: `${where}: name the metadata key (like amount, or customer.tier: no spaces, no empty parts)` };
    }
    const key = keyOf(row);
    if (Object.hasOwn(conditions, key)) return { ok: false, error: `${where}: ${key} already has a condition; a rule holds one per field` };
    const value = valueOf(row);
    if (!value.ok) return { ok: false, error: `${where} (${key}) ${value.error}` };
    conditions[key] = row.operator === '=' ? value.value : { operator: row.operator, value: value.value };
  }
  return { ok: true, value: conditions };
}

/** Conditions in one line for a table: `task_type = refund · metadata.amount > 1000`. */
export function describeConditions(conditions: Conditions): string {
  return rowsOf(conditions)
    .map((row) => `${keyOf(row)} ${row.operator} ${LIST_OPERATORS.has(row.operator) ? `[${row.value}]` : row.value}`)
    .join(' · ');
}
