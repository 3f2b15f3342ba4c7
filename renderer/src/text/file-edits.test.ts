import { describe, expect, it } from 'vitest';
import { fileChangeOf } from './file-edits';

const review = (tool: string, input: unknown) => ({ task_type: `claude-code:${tool}`, proposed_action: JSON.stringify(input, null, 2) });

describe('fileChangeOf', () => {
  it('reads an Edit, a MultiEdit with its edits in order, and a Write', () => {
    expect(fileChangeOf(review('Edit', { file_path: '/srv/app.ts', old_string: 'a', new_string: 'b' }))).toEqual({
      tool: 'Edit',
      filePath: '/srv/app.ts',
      edits: [{ before: 'a', after: 'b', replaceAll: false }],
    });
    const edits = [
      { old_string: 'one', new_string: 'two', replace_all: true },
      { old_string: 'three', new_string: 'four' },
    ];
    expect(fileChangeOf(review('MultiEdit', { file_path: 'x.py', edits }))?.edits).toEqual([
      { before: 'one', after: 'two', replaceAll: true },
      { before: 'three', after: 'four', replaceAll: false },
    ]);
    expect(fileChangeOf(review('Write', { file_path: 'new.txt', content: 'hello\n' }))).toEqual({
      tool: 'Write',
      filePath: 'new.txt',
      edits: [{ before: '', after: 'hello\n', replaceAll: false }],
    });
  });

  it('is null for anything it would not show in full: other tools, keys it does not know, values of another type, text that is not JSON', () => {
    expect(fileChangeOf(review('Bash', { command: 'ls' }))).toBeNull();
    expect(fileChangeOf({ task_type: 'refund', proposed_action: '{"file_path":"a","content":"b"}' })).toBeNull();
    expect(fileChangeOf(review('Edit', { file_path: 'a', old_string: 'x', new_string: 'y', also_run: 'rm -rf ~' }))).toBeNull();
    expect(fileChangeOf(review('Edit', { file_path: 'a', old_string: 'x', new_string: 2 }))).toBeNull();
    expect(fileChangeOf(review('MultiEdit', { file_path: 'a', edits: [{ old_string: 'x', new_string: 'y', mode: 'append' }] }))).toBeNull();
    expect(fileChangeOf(review('MultiEdit', { file_path: 'a', edits: [] }))).toBeNull();
    expect(fileChangeOf(review('Write', { file_path: 'a', content: 'b', executable: true }))).toBeNull();
    expect(fileChangeOf({ task_type: 'claude-code:Write', proposed_action: 'not json' })).toBeNull();
  });
});
