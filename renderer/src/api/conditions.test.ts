import { describe, expect, it } from 'vitest';
import { type ConditionRow, conditionsOf, describeConditions, newConditionRow, rowsOf } from './conditions';

const row = (fields: Partial<ConditionRow>): ConditionRow => ({ ...newConditionRow(), ...fields });

describe('conditions written as rows', () => {
  it('become the object the API takes: a bare value for =, {operator, value} otherwise', () => {
    expect(
      conditionsOf([
        row({ field: 'task_type', operator: '=', value: 'refund' }),
        row({ field: 'metadata', path: 'amount', operator: '>', value: '1000' }),
        row({ field: 'urgency', operator: 'in', value: 'high, critical' }),
        row({ field: 'proposed_action', operator: 'matches', value: '^Refund \\d+' }),
      ]),
    ).toEqual({
      ok: true,
      value: {
        task_type: 'refund',
        'metadata.amount': { operator: '>', value: 1000 },
        urgency: { operator: 'in', value: ['high', 'critical'] },
        proposed_action: { operator: 'matches', value: '^Refund \\d+' },
      },
    });
  });

  it('reads numbers and true/false in metadata, keeps the text fields text, and quoted values text everywhere', () => {
    const parsed = conditionsOf([
      row({ field: 'metadata', path: 'vip', value: 'true' }),
      row({ field: 'metadata', path: 'code', value: '"0042"' }),
      row({ field: 'task_type', value: '42' }),
      row({ field: 'metadata', path: 'tags', operator: 'in', value: '"a, b", 7' }),
    ]);
    expect(parsed).toEqual({ ok: true, value: { 'metadata.vip': true, 'metadata.code': '0042', task_type: '42', 'metadata.tags': { operator: 'in', value: ['a, b', 7] } } });
  });

  it('says which row is wrong: no value, no metadata key, or a second condition on one field', () => {
    expect(conditionsOf([row({ value: '  ' })])).toEqual({ ok: false, error: 'Condition 1 (task_type) needs a value' });
    expect(conditionsOf([row({ value: 'a' }), row({ field: 'metadata', path: 'customer..tier', value: '1' })])).toMatchObject({ ok: false, error: expect.stringMatching(/^Condition 2: name the metadata key/) });
    expect(conditionsOf([row({ value: 'a' }), row({ value: 'b' })])).toEqual({ ok: false, error: 'Condition 2: task_type already has a condition; a rule holds one per field' });
    expect(conditionsOf([row({ operator: 'not_in', value: ' , ' })])).toMatchObject({ ok: false, error: expect.stringContaining('at least one value') });
  });

  it('read back from a stored rule as the rows that write it again, whatever shorthand it was written in', () => {
    const stored = {
      task_type: 'refund',
      urgency: ['high', 'critical'],
      'metadata.amount': { operator: '>=', value: 1000 },
      'metadata.code': { operator: '=', value: '0042' },
      'metadata.customer.tier': { operator: '!=', value: 'gold' },
      agent_reasoning: { operator: 'contains', value: ' trailing ' },
      'metadata.flags': { operator: 'not_in', value: ['x, y', true, 3] },
      framework: '',
    };
    const rows = rowsOf(stored);
    expect(rows.slice(0, 3)).toEqual([
      { field: 'task_type', path: '', operator: '=', value: 'refund' },
      { field: 'urgency', path: '', operator: 'in', value: 'high, critical' },
      { field: 'metadata', path: 'amount', operator: '>=', value: '1000' },
    ]);
    expect(conditionsOf(rows)).toEqual({ ok: true, value: { ...stored, urgency: { operator: 'in', value: ['high', 'critical'] }, 'metadata.code': '0042' } });
  });

  it('reads in one line for a table', () => {
    expect(describeConditions({ task_type: 'refund', 'metadata.amount': { operator: '>', value: 1000 }, urgency: ['high'] })).toBe('task_type = refund · metadata.amount > 1000 · urgency in [high]');
    expect(describeConditions({})).toBe('');
  });
});
