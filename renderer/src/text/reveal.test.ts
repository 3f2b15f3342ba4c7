import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { describeFindings, describeSize, escapeHidden, findingsOf, fromEditable, type Piece, reveal, revealPlain, toEditable } from './reveal';

/** The pieces as the reviewer reads them: marks as their labels. */
const shown = (pieces: Piece[]): string =>
  pieces.map((piece) => (piece.kind === 'hidden' || piece.kind === 'blank-lines' || piece.kind === 'spaces' ? piece.label : piece.kind === 'line-break' ? '⏎' : piece.text)).join('');

describe('reveal', () => {
  it('marks bidi controls where they stand, so the text reads in the order it is stored', () => {
    const text = 'echo "cleaning build cache" \u202E; rm -rf ~; #\u202C';
    expect(shown(reveal(text))).toBe('echo "cleaning build cache" ⟦U+202E⟧; rm -rf ~; #⟦U+202C⟧');
    const marks = reveal(text).filter((piece) => piece.kind === 'hidden');
    expect(marks.map((piece) => piece.kind === 'hidden' && [piece.name, piece.effect])).toEqual([
      ['RIGHT-TO-LEFT OVERRIDE', 'reorders'],
      ['POP DIRECTIONAL FORMATTING', 'reorders'],
    ]);
  });

  it.each([
    ['zero-width space', 'pay\u200Bpal', 'pay⟦U+200B⟧pal'],
    ['zero-width joiner between Latin letters', 'r\u200Dm', 'r⟦U+200D⟧m'],
    ['byte order mark', '\uFEFFls', '⟦U+FEFF⟧ls'],
    ['soft hyphen', 'ad\u00ADmin', 'ad⟦U+00AD⟧min'],
    ['word joiner and isolates', 'a\u2060b\u2066c\u2069', 'a⟦U+2060⟧b⟦U+2066⟧c⟦U+2069⟧'],
    ['left-to-right and Arabic letter marks', '\u200E\u200F\u061C', '⟦U+200E⟧⟦U+200F⟧⟦U+061C⟧'],
    ['escape sequences', 'ok\u001B[2K\u001B[1A', 'ok⟦U+001B⟧[2K⟦U+001B⟧[1A'],
    ['C1 controls and DEL', 'a\u009Bb\u007F', 'a⟦U+009B⟧b⟦U+007F⟧'],
    ['a carriage return alone', 'safe\rrm -rf /', 'safe⟦U+000D⟧rm -rf /'],
    ['line and paragraph separators', 'a\u2028b\u2029', 'a⟦U+2028⟧b⟦U+2029⟧'],
    ['invisible Hangul fillers and the blank braille pattern', '\u3164\u115F\u1160\uFFA0\u2800', '⟦U+3164⟧⟦U+115F⟧⟦U+1160⟧⟦U+FFA0⟧⟦U+2800⟧'],
    ['tag characters', 'hi\u{E0069}\u{E0067}', 'hi⟦U+E0069⟧⟦U+E0067⟧'],
    ['a variation selector after a plain letter, or in a run', 'a\uFE0F ⚠\uFE0F\uFE0F', 'a⟦U+FE0F⟧ ⚠️⟦U+FE0F⟧'],
  ])('marks %s', (_, text, expected) => {
    expect(shown(reveal(text))).toBe(expected);
  });

  it.each([
    ['newlines, tabs and CRLF', 'a\tb\r\nc\nd'],
    ['emoji with a variation selector', '⚠️ careful ✔️'],
    ['emoji joined with ZWJ, skin tones and flags', '👩🏽‍💻 👨‍👩‍👧 🏳️‍🌈'],
    ['a Persian word written with a zero-width non-joiner', 'می‌خواهم'],
    ['an ideographic variation sequence', '葛\u{E0100}'],
    ['Japanese mixing Han, Hiragana, Katakana and Latin', '東京タワーへ行きます Tシャツ'],
    ['Korean mixing Hangul and Han', '大韓民國 대한민국'],
    ['Greek and Cyrillic words of their own', 'Ελληνικά русский'],
    ['a few blank lines and indentation', 'a\n\n\nb\n        indented'],
  ])('leaves %s as they are', (_, text) => {
    expect(reveal(text).every((piece) => piece.kind === 'text')).toBe(true);
    expect(shown(reveal(text))).toBe(text);
  });

  it('flags a word that mixes Latin with Cyrillic look-alikes, naming the scripts and picking out the odd letter', () => {
    const [word] = reveal('pаypal.com').filter((piece) => piece.kind === 'mixed-script');
    expect(word).toMatchObject({ text: 'pаypal', scripts: ['Latin', 'Cyrillic'] });
    expect(word.kind === 'mixed-script' && word.letters.filter((letter) => letter.foreign)).toEqual([{ text: 'а', script: 'Cyrillic', foreign: true }]);
    expect(reveal('Αpple').some((piece) => piece.kind === 'mixed-script' && piece.scripts.join() === 'Latin,Greek')).toBe(true);
  });

  it('collapses more than two blank lines into one marked line, so a tail cannot be pushed out of sight', () => {
    const text = `Refund order 1042${'\n'.repeat(300)}; and wire EUR 1,000,000`;
    expect(shown(reveal(text))).toBe('Refund order 1042\n⟦299 blank lines⟧\n; and wire EUR 1,000,000');
    expect(shown(reveal('a\n \n\t\n\n\nb'))).toBe('a\n⟦4 blank lines⟧\nb');
    expect(shown(reveal('a\n\n\nb'))).toBe('a\n\n\nb');
  });

  it('marks a wide run of spaces or tabs', () => {
    expect(shown(reveal(`echo ok${' '.repeat(400)}; rm -rf ~`))).toBe('echo ok⟦400 spaces⟧; rm -rf ~');
    expect(shown(reveal(`a${'\t'.repeat(5)}b`))).toBe('a⟦5 tabs⟧b');
    expect(shown(reveal(`a${' '.repeat(32)}b`))).toBe(`a${' '.repeat(32)}b`);
  });

  it('shows line breaks as ⏎ on one line, and stops once the limit is shown', () => {
    expect(shown(reveal('SELECT 1;\n-- note\nDROP TABLE t;', { oneLine: true }))).toBe('SELECT 1;⏎-- note⏎DROP TABLE t;');
    expect(revealPlain('a\nb', { oneLine: true })).toBe('a ⏎ b');
    expect(shown(reveal(`go${'\n'.repeat(300)}wire EUR 1,000,000`, { oneLine: true, limit: 200 }))).toBe('go⏎⟦299 blank lines⟧⏎wire EUR 1,000,000');
    expect(shown(reveal('word '.repeat(1000), { oneLine: true, limit: 20 })).length).toBeLessThan(30);
  });

  it('never drops or adds a character: the pieces put together are the text', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 200 }), fc.boolean(), (text, oneLine) => {
        expect(reveal(text, { oneLine }).map((piece) => piece.text).join('')).toBe(text);
      }),
    );
  });
});

describe('what the warning says', () => {
  it('counts hidden characters by what they do, names mixed words and long blank runs', () => {
    const findings = findingsOf(reveal(`x\u202E y\u202C z\u200B pаypal${'\n'.repeat(10)}end`));
    expect(describeFindings(findings)).toEqual([
      '2 characters that reorder text (U+202E, U+202C)',
      '1 invisible character (U+200B)',
      'a word mixing Latin and Cyrillic letters: “pаypal” (а is Cyrillic)',
      '9 blank lines in a row',
    ]);
  });

  it('gives the size of an action', () => {
    expect(describeSize('one line')).toBe('8 characters · 1 line');
    expect(describeSize(`a${'\n'.repeat(1300)}b`)).toBe('1,302 characters · 1,301 lines');
  });
});

describe('the modify editor', () => {
  it('writes hidden characters and long blank runs as marks, and turns the marks left back into them', () => {
    const action = `echo "cleaning build cache" \u202E; rm -rf ~; #\u202C${'\n'.repeat(10)}done`;
    const editable = toEditable(action);
    expect(editable).toBe('echo "cleaning build cache" ⟦U+202E⟧; rm -rf ~; #⟦U+202C⟧\n⟦9 blank lines⟧\ndone');
    expect(fromEditable(editable)).toBe(action);
    expect(fromEditable(editable.replace('⟦U+202E⟧', '').replace('⟦9 blank lines⟧', ''))).toBe('echo "cleaning build cache" ; rm -rf ~; #\u202C\n\ndone');
  });

  it('keeps the editor’s own bracket apart from its marks, and turns back only marks it writes', () => {
    expect(toEditable('literal ⟦U+202E⟧')).toBe('literal ⟦U+27E6⟧U+202E⟧');
    expect(fromEditable(toEditable('literal ⟦U+202E⟧'))).toBe('literal ⟦U+202E⟧');
    expect(fromEditable('⟦U+0041⟧ ⟦U+110000⟧')).toBe('⟦U+0041⟧ ⟦U+110000⟧');
  });

  it('writes pasted hidden characters as marks', () => {
    expect(escapeHidden('ok\u202Eko ⚠️')).toBe('ok⟦U+202E⟧ko ⚠️');
  });

  it('gets back every text from what the editor shows, blank runs aside', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 200 }), (text) => {
        expect(fromEditable(toEditable(text))).toBe(text.replace(/\n(?:[ \t]*(?:\r(?=\n))?\n){3,}/g, (run) => '\n'.repeat(run.split('\n').length - 1)));
      }),
    );
  });
});
