import { describe, expect, it } from 'vitest';
import { patchLines } from './unified-diff';

const kinds = (text: string): string[] | undefined => patchLines(text)?.map((line) => `${line.kind}: ${line.text}`);

describe('patchLines', () => {
  it('classifies a git diff line by line', () => {
    const patch = [
      'diff --git a/server/limits.ts b/server/limits.ts',
      'index 3f2c1aa..8b0d9e1 100644',
      '--- a/server/limits.ts',
      '+++ b/server/limits.ts',
      '@@ -1,3 +1,3 @@ export const LIMITS = {',
      '   requests: 100,',
      '-  burst: 10,',
      '+  burst: 50,',
      ' };',
      '\\ No newline at end of file',
    ].join('\n');
    expect(kinds(patch)).toEqual([
      'file: diff --git a/server/limits.ts b/server/limits.ts',
      'file: index 3f2c1aa..8b0d9e1 100644',
      'file: --- a/server/limits.ts',
      'file: +++ b/server/limits.ts',
      'hunk: @@ -1,3 +1,3 @@ export const LIMITS = {',
      'context:    requests: 100,',
      'removed: -  burst: 10,',
      'added: +  burst: 50,',
      'context:  };',
      'note: \\ No newline at end of file',
    ]);
  });

  it('reads a removed line that looks like a file header as removed, by the hunk’s line counts', () => {
    expect(kinds('--- a/notes.md\n+++ b/notes.md\n@@ -1,2 +1 @@\n--- old rule\n keep\nafterwards: a commit message line\n')).toEqual([
      'file: --- a/notes.md',
      'file: +++ b/notes.md',
      'hunk: @@ -1,2 +1 @@',
      'removed: --- old rule',
      'context:  keep',
      'text: afterwards: a commit message line',
    ]);
  });

  it('takes CRLF line breaks as line breaks, and a lone CR as part of the line', () => {
    expect(kinds('--- a\r\n+++ b\r\n@@ -1 +1 @@\r\n-x\r\n+y\r')).toEqual(['file: --- a', 'file: +++ b', 'hunk: @@ -1 +1 @@', 'removed: -x', 'added: +y\r']);
  });

  it('is null for text that is not a unified diff', () => {
    expect(patchLines('Refund order 1042 in full')).toBeNull();
    expect(patchLines('--- a list\n- one\n+ two')).toBeNull();
    expect(patchLines('-- SQL comment\nDELETE FROM sessions;')).toBeNull();
  });
});
