import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { type DiffLine, diffTexts, foldUnchanged, splitLines, type TextDiff } from './diff';

/** The diff as a reviewer reads it: one line each, `−`, `+` or a space first. */
const shown = (diff: TextDiff): string[] => diff.lines.map((line) => `${{ same: ' ', removed: '−', added: '+' }[line.kind]}${line.text}`);

/** The diff applied to `before`: unchanged lines checked against it, removed ones skipped, added ones taken. */
function apply(before: string, lines: readonly DiffLine[]): string {
  const old = splitLines(before);
  let at = 0;
  let out = '';
  for (const line of lines) {
    if (line.kind === 'added') {
      out += line.text + line.ending;
      continue;
    }
    if (old[at] !== line.text + line.ending || line.before !== at + 1) throw new Error(`line ${at + 1} of the old text is not ${JSON.stringify(line.text)}`);
    if (line.kind === 'same') out += old[at];
    at += 1;
  }
  if (at !== old.length) throw new Error(`${old.length - at} lines of the old text were not accounted for`);
  return out;
}

/** The segments of a line with the changed ones in [brackets]. */
const marked = (line: DiffLine): string => (line.segments ?? []).map((segment) => (segment.changed ? `[${segment.text}]` : segment.text)).join('');

describe('diffTexts', () => {
  it('shows a modified multi-line SQL statement as its removed and added lines, the rest unchanged', () => {
    const proposed = 'DELETE FROM sessions\nWHERE created_at < now();\n-- all of them';
    const approved = "DELETE FROM sessions\nWHERE last_seen < now() - interval '30 days';\n-- only the stale ones";
    const diff = diffTexts(proposed, approved);
    expect(shown(diff)).toEqual([
      ' DELETE FROM sessions',
      '−WHERE created_at < now();',
      '−-- all of them',
      "+WHERE last_seen < now() - interval '30 days';",
      '+-- only the stale ones',
    ]);
    expect([diff.removed, diff.added, diff.capped]).toEqual([2, 2, false]);
    expect(diff.lines.map((line) => [line.before, line.after])).toEqual([
      [1, 1],
      [2, null],
      [3, null],
      [null, 2],
      [null, 3],
    ]);
  });

  it('finds the shortest alignment, not just the common start and end', () => {
    // Myers' own example: ABCABBA to CBABAC keeps four lines and changes five.
    const diff = diffTexts('a\nb\nc\na\nb\nb\na\n', 'c\nb\na\nb\na\nc\n');
    expect([diff.removed + diff.added, diff.lines.length]).toEqual([5, 9]);
    // The last line gains a line break: it is removed and added again.
    expect(shown(diffTexts('one\ntwo\nthree\nfour', 'zero\none\nthree\nfour\nfive'))).toEqual(['+zero', ' one', '−two', ' three', '−four', '+four', '+five']);
  });

  it('marks the words that changed inside a changed line', () => {
    const diff = diffTexts('Refund EUR 250.00 to card 4242', 'Refund EUR 125.00 to card 4242 now', { words: true });
    expect(diff.lines.map(marked)).toEqual(['Refund EUR [250].00 to card 4242', 'Refund EUR [125].00 to card 4242[ now]']);
  });

  it('marks no words in a line that was replaced outright, nor unless asked', () => {
    const replaced = diffTexts('DROP TABLE users;', 'SELECT count(*) FROM audit_log WHERE day = today;', { words: true });
    expect(replaced.lines.every((line) => line.segments === undefined)).toBe(true);
    expect(diffTexts('Refund EUR 250.00', 'Refund EUR 125.00').lines.every((line) => line.segments === undefined)).toBe(true);
  });

  it('says when two lines differ only in how they end', () => {
    const diff = diffTexts('echo ok\r\n', 'echo ok\n', { words: true });
    expect(diff.lines.map((line) => [line.kind, line.text, line.ending, line.endingChanged])).toEqual([
      ['removed', 'echo ok', '\r\n', true],
      ['added', 'echo ok', '\n', true],
    ]);
    expect(diffTexts('last', 'last\n', { words: true }).lines.map((line) => line.endingChanged)).toEqual([true, true]);
  });

  it('shows the whole of a new text as added, and of a deleted one as removed', () => {
    expect(shown(diffTexts('', 'line 1\nline 2\n'))).toEqual(['+line 1', '+line 2']);
    expect(shown(diffTexts('gone\n', ''))).toEqual(['−gone']);
    expect(diffTexts('', '').lines).toEqual([]);
  });

  it('stops aligning past its work limit and says so, still showing every line of both texts', () => {
    const before = Array.from({ length: 400 }, (_, i) => `old ${i}`).join('\n');
    const after = Array.from({ length: 400 }, (_, i) => (i % 2 ? `old ${i}` : `new ${i}`)).join('\n');
    const capped = diffTexts(`head\n${before}\ntail`, `head\n${after}\ntail`, { workLimit: 1_000, words: true });
    expect(capped.capped).toBe(true);
    expect(shown(capped)[0]).toBe(' head');
    // "old 399" is common to both ends, so it is kept with "tail".
    expect(shown(capped).slice(-2)).toEqual([' old 399', ' tail']);
    expect([capped.removed, capped.added]).toEqual([399, 399]);
    expect(apply(`head\n${before}\ntail`, capped.lines)).toBe(`head\n${after}\ntail`);
    expect(diffTexts(before, after).capped).toBe(false);
  });

  it('aligns two 100,000-character texts within its limit or says it stopped', () => {
    const lines = Array.from({ length: 5_000 }, (_, i) => `UPDATE accounts SET flagged = false WHERE id = ${i};`);
    const before = lines.join('\n');
    const after = lines.map((line, i) => (i % 50 === 0 ? line.replace('false', 'true') : line)).join('\n');
    expect(before.length).toBeGreaterThan(100_000);
    const started = performance.now();
    const diff = diffTexts(before, after, { words: true });
    expect(performance.now() - started).toBeLessThan(2_000);
    expect([diff.capped, diff.removed, diff.added]).toEqual([false, 100, 100]);
    const shuffled = diffTexts(before, [...lines].reverse().join('\n'));
    expect(shuffled.capped).toBe(true);
    expect(apply(before, shuffled.lines)).toBe([...lines].reverse().join('\n'));
  });

  it('aligns a short text against a long one without giving up', () => {
    const long = Array.from({ length: 3_000 }, (_, i) => (i === 1_000 ? 'keep me' : `added ${i}`)).join('\n');
    const diff = diffTexts('first\nkeep me\nlast', long);
    expect([diff.capped, diff.removed, diff.added]).toEqual([false, 2, 2_999]);
    expect(apply('first\nkeep me\nlast', diff.lines)).toBe(long);
  });

  it('gives, applied to the old text, the new one', () => {
    const text = fc.array(fc.constantFrom('a', 'b', 'c', 'd e', '', '\r', 'x y z'), { maxLength: 30 }).map((parts) => parts.join('\n'));
    fc.assert(
      fc.property(text, text, fc.boolean(), (before, after, words) => {
        const diff = diffTexts(before, after, { words });
        expect(apply(before, diff.lines)).toBe(after);
        for (const line of diff.lines) if (line.segments) expect(line.segments.map((segment) => segment.text).join('')).toBe(line.text);
      }),
    );
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 120 }), fc.string({ unit: 'binary', maxLength: 120 }), (before, after) => {
        expect(apply(before, diffTexts(before, after, { words: true }).lines)).toBe(after);
      }),
      { numRuns: 50 },
    );
  });

  it('is minimal, by Myers or by the table once Myers gives up: no line is both removed and added where keeping it would do', () => {
    const text = fc.array(fc.constantFrom('a', 'b', 'c'), { maxLength: 12 }).map((parts) => parts.join('\n'));
    fc.assert(
      fc.property(text, text, fc.constantFrom(undefined, 12 * 12), (before, after, workLimit) => {
        const diff = diffTexts(before, after, { workLimit });
        expect(diff.removed + diff.added).toBe(splitLines(before).length + splitLines(after).length - 2 * lcsLength(splitLines(before), splitLines(after)));
      }),
    );
  });
});

/** The longest common subsequence, by the textbook table: what a minimal diff keeps. */
function lcsLength(a: string[], b: string[]): number {
  const table = Array.from({ length: a.length + 1 }, () => new Array<number>(b.length + 1).fill(0));
  for (let i = 1; i <= a.length; i += 1) {
    for (let j = 1; j <= b.length; j += 1) table[i][j] = a[i - 1] === b[j - 1] ? table[i - 1][j - 1] + 1 : Math.max(table[i - 1][j], table[i][j - 1]);
  }
  return table[a.length][b.length];
}

describe('foldUnchanged', () => {
  const lines = diffTexts(Array.from({ length: 30 }, (_, i) => `line ${i + 1}`).join('\n'), Array.from({ length: 30 }, (_, i) => (i === 14 ? 'changed' : `line ${i + 1}`)).join('\n')).lines;

  it('folds long unchanged runs, keeping the context lines around each change', () => {
    const rows = foldUnchanged(lines, 3);
    expect(rows.map((row) => (row.kind === 'fold' ? `⋯ ${row.lines.length}` : row.line.text))).toEqual([
      '⋯ 11',
      'line 12',
      'line 13',
      'line 14',
      'line 15',
      'changed',
      'line 16',
      'line 17',
      'line 18',
      '⋯ 12',
    ]);
  });

  it('shows a fold in full once opened', () => {
    const [first] = foldUnchanged(lines, 3);
    expect(first.kind === 'fold' && first.at).toBe(0);
    const rows = foldUnchanged(lines, 3, new Set([0]));
    expect(rows.slice(0, 11).every((row) => row.kind === 'line')).toBe(true);
    expect(rows.filter((row) => row.kind === 'fold')).toHaveLength(1);
  });

  it('leaves a short unchanged run as it is', () => {
    expect(foldUnchanged(diffTexts('a\nb\nc', 'a\nB\nc').lines, 3).every((row) => row.kind === 'line')).toBe(true);
  });
});
