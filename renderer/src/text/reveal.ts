/**
 * Agent text as a reviewer must see it: every character that could hide or reorder what the
 * text says becomes a visible mark, long runs of blank lines and spaces are shown as a count,
 * and words that mix look-alike scripts (`pаypal` with a Cyrillic а) are flagged. Pure: the
 * components lay the pieces out (`RevealedText.vue`), the modify editor writes them as text.
 */

// ── Which characters are hidden ─────────────────────────────────────────────────────────────
// The same rule as `server/domain/text.ts` (the dashboard imports no server code);
// test/unit/hidden-characters.test.ts checks that the two classify every code point alike.

/** Controls, format characters (bidi controls, zero-width characters, tags…), line and paragraph separators, default-ignorable "letters", the blank braille pattern. */
const HIDDEN = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Default_Ignorable_Code_Point}\u2800]/u;
const VARIATION_SELECTOR = /\p{Variation_Selector}/u;
/** What a variation selector may follow: an emoji (⚠️), an ideograph, a Mongolian letter. */
const VARIATION_BASE = /[\p{Emoji}\p{Ideographic}\p{Script=Mongolian}]/u;
const BEFORE_EMOJI_JOINER = /[\p{Extended_Pictographic}\p{Emoji_Modifier}\p{Variation_Selector}]/u;
const EMOJI = /\p{Extended_Pictographic}/u;
/** A letter or mark of a script that joins with ZWJ/ZWNJ (Arabic, Persian, Indic…), not of one with Latin look-alikes. */
const JOINED_LETTER = /^(?![\p{Script=Latin}\p{Script=Greek}\p{Script=Cyrillic}])[\p{L}\p{M}]$/u;

/**
 * Whether the code point at `index` of `chars` (a string split into code points) is hidden:
 * newline, tab and the CR of a CRLF are not; neither are a variation selector after an emoji
 * or ideograph, nor a zero-width joiner inside an emoji sequence or between Arabic or Indic letters.
 */
export function isHiddenAt(chars: readonly string[], index: number): boolean {
  const char = chars[index];
  if (char === '\n' || char === '\t' || (char === '\r' && chars[index + 1] === '\n') || !HIDDEN.test(char)) return false;
  const before = chars[index - 1] ?? '';
  const after = chars[index + 1] ?? '';
  if (VARIATION_SELECTOR.test(char)) return !VARIATION_BASE.test(before);
  if (char === '\u200C' || char === '\u200D') {
    return !((BEFORE_EMOJI_JOINER.test(before) && EMOJI.test(after)) || (JOINED_LETTER.test(before) && JOINED_LETTER.test(after)));
  }
  return true;
}

// ── What a hidden character is called ───────────────────────────────────────────────────────

/** What a hidden character does: reorders the text around it, controls a terminal or printer, or is just not seen. */
export type Effect = 'reorders' | 'control' | 'invisible';

const BIDI_CONTROL = /[\u061C\u200E\u200F\u202A-\u202E\u2066-\u2069]/u;

const C0_NAMES = [
  'NULL', 'START OF HEADING', 'START OF TEXT', 'END OF TEXT', 'END OF TRANSMISSION', 'ENQUIRY', 'ACKNOWLEDGE', 'BELL',
  'BACKSPACE', 'CHARACTER TABULATION', 'LINE FEED', 'LINE TABULATION', 'FORM FEED', 'CARRIAGE RETURN', 'SHIFT OUT', 'SHIFT IN',
  'DATA LINK ESCAPE', 'DEVICE CONTROL ONE', 'DEVICE CONTROL TWO', 'DEVICE CONTROL THREE', 'DEVICE CONTROL FOUR', 'NEGATIVE ACKNOWLEDGE',
  'SYNCHRONOUS IDLE', 'END OF TRANSMISSION BLOCK', 'CANCEL', 'END OF MEDIUM', 'SUBSTITUTE', 'ESCAPE', 'FILE SEPARATOR',
  'GROUP SEPARATOR', 'RECORD SEPARATOR', 'UNIT SEPARATOR',
];

/** Names of the hidden characters met in practice; others are named by their kind. */
const NAMES: Record<number, string> = {
  0x7f: 'DELETE',
  0x85: 'NEXT LINE',
  0x9b: 'CONTROL SEQUENCE INTRODUCER',
  0x9d: 'OPERATING SYSTEM COMMAND',
  0xad: 'SOFT HYPHEN',
  0x34f: 'COMBINING GRAPHEME JOINER',
  0x61c: 'ARABIC LETTER MARK',
  0x115f: 'HANGUL CHOSEONG FILLER',
  0x1160: 'HANGUL JUNGSEONG FILLER',
  0x180e: 'MONGOLIAN VOWEL SEPARATOR',
  0x200b: 'ZERO WIDTH SPACE',
  0x200c: 'ZERO WIDTH NON-JOINER',
  0x200d: 'ZERO WIDTH JOINER',
  0x200e: 'LEFT-TO-RIGHT MARK',
  0x200f: 'RIGHT-TO-LEFT MARK',
  0x2028: 'LINE SEPARATOR',
  0x2029: 'PARAGRAPH SEPARATOR',
  0x202a: 'LEFT-TO-RIGHT EMBEDDING',
  0x202b: 'RIGHT-TO-LEFT EMBEDDING',
  0x202c: 'POP DIRECTIONAL FORMATTING',
  0x202d: 'LEFT-TO-RIGHT OVERRIDE',
  0x202e: 'RIGHT-TO-LEFT OVERRIDE',
  0x2060: 'WORD JOINER',
  0x2061: 'FUNCTION APPLICATION',
  0x2062: 'INVISIBLE TIMES',
  0x2063: 'INVISIBLE SEPARATOR',
  0x2064: 'INVISIBLE PLUS',
  0x2066: 'LEFT-TO-RIGHT ISOLATE',
  0x2067: 'RIGHT-TO-LEFT ISOLATE',
  0x2068: 'FIRST STRONG ISOLATE',
  0x2069: 'POP DIRECTIONAL ISOLATE',
  0x2800: 'BRAILLE PATTERN BLANK',
  0x3164: 'HANGUL FILLER',
  0xfeff: 'ZERO WIDTH NO-BREAK SPACE (BYTE ORDER MARK)',
  0xffa0: 'HALFWIDTH HANGUL FILLER',
  0xfff9: 'INTERLINEAR ANNOTATION ANCHOR',
  0xfffa: 'INTERLINEAR ANNOTATION SEPARATOR',
  0xfffb: 'INTERLINEAR ANNOTATION TERMINATOR',
};

/** "U+202E" */
export function codePointLabel(codePoint: number): string {
  return `U+${codePoint.toString(16).toUpperCase().padStart(4, '0')}`;
}

export function characterName(codePoint: number): string {
  if (codePoint < 0x20) return C0_NAMES[codePoint];
  if (NAMES[codePoint]) return NAMES[codePoint];
  if (codePoint >= 0xe0020 && codePoint <= 0xe007e) return `TAG “${String.fromCodePoint(codePoint - 0xe0000)}” (an invisible copy of it)`;
  if (codePoint >= 0xfe00 && codePoint <= 0xfe0f) return `VARIATION SELECTOR-${codePoint - 0xfe00 + 1}`;
  if (codePoint >= 0xe0100 && codePoint <= 0xe01ef) return `VARIATION SELECTOR-${codePoint - 0xe0100 + 17}`;
  const char = String.fromCodePoint(codePoint);
  if (/\p{Cc}/u.test(char)) return 'a control character';
  if (/\p{Cf}/u.test(char)) return 'an invisible format character';
  return 'an invisible character';
}

export function effectOf(codePoint: number): Effect {
  const char = String.fromCodePoint(codePoint);
  if (BIDI_CONTROL.test(char)) return 'reorders';
  return /\p{Cc}/u.test(char) ? 'control' : 'invisible';
}

// ── Scripts ────────────────────────────────────────────────────────────────────────────────

/** Scripts a letter is told apart by: those with Latin look-alikes first, then the widely written ones. */
const SCRIPT_NAMES = [
  'Latin', 'Cyrillic', 'Greek', 'Armenian', 'Cherokee', 'Coptic', 'Georgian', 'Lisu', 'Canadian_Aboriginal', 'Tifinagh', 'Vai',
  'Hebrew', 'Arabic', 'Syriac', 'Thaana', 'Nko', 'Devanagari', 'Bengali', 'Gurmukhi', 'Gujarati', 'Oriya', 'Tamil', 'Telugu',
  'Kannada', 'Malayalam', 'Sinhala', 'Thai', 'Lao', 'Tibetan', 'Myanmar', 'Khmer', 'Mongolian', 'Ethiopic', 'Runic', 'Ogham',
  'Han', 'Hiragana', 'Katakana', 'Bopomofo', 'Hangul', 'Yi',
] as const;
const SCRIPTS = SCRIPT_NAMES.map((name) => [name.replace('_', ' '), new RegExp(`\\p{Script=${name}}`, 'u')] as const);
/** Scripts that are written together as one writing system (Unicode TS #39, "highly restrictive"). */
const ONE_WRITING_SYSTEM = [
  ['Latin', 'Han', 'Hiragana', 'Katakana'],
  ['Latin', 'Han', 'Bopomofo'],
  ['Latin', 'Han', 'Hangul'],
];
const SHARED_BY_SCRIPTS = /[\p{Script=Common}\p{Script=Inherited}]/u;
const scriptCache = new Map<string, string | null>();

/** The script of a letter; null for one many scripts share (the Japanese prolonged sound mark ー). */
export function scriptOf(letter: string): string | null {
  if (/^[A-Za-z]$/.test(letter)) return 'Latin';
  let script = scriptCache.get(letter);
  if (script === undefined) {
    script = SHARED_BY_SCRIPTS.test(letter) ? null : (SCRIPTS.find(([, pattern]) => pattern.test(letter))?.[0] ?? 'another script');
    scriptCache.set(letter, script);
  }
  return script;
}

/** Whether letters of these scripts in one word are a sign of look-alikes rather than ordinary writing. */
function mixesScripts(scripts: Set<string>): boolean {
  return scripts.size > 1 && !ONE_WRITING_SYSTEM.some((system) => [...scripts].every((script) => system.includes(script)));
}

// ── Pieces ─────────────────────────────────────────────────────────────────────────────────

export type Piece =
  | { kind: 'text'; text: string }
  /** One hidden character, shown as `label` ("⟦U+202E⟧"). */
  | { kind: 'hidden'; text: string; codePoint: number; label: string; name: string; effect: Effect }
  /** More than MAX_BLANK_LINES blank lines in a row, shown as one line "⟦296 blank lines⟧". */
  | { kind: 'blank-lines'; text: string; count: number; label: string }
  /** A run of spaces and tabs wider than MAX_SPACE_COLUMNS, shown as "⟦400 spaces⟧". */
  | { kind: 'spaces'; text: string; count: number; label: string }
  /** A word mixing scripts; `letters` says which letters are not of the word's main script. */
  | { kind: 'mixed-script'; text: string; scripts: string[]; letters: Array<{ text: string; script: string; foreign: boolean }> }
  /** One-line layouts only: a line break, shown as ⏎. */
  | { kind: 'line-break'; text: string };

/** Blank lines in a row shown as they are; more collapse into one marked line. */
export const MAX_BLANK_LINES = 2;
/** Columns of spaces and tabs (a tab counting 8) shown as they are; a wider run is marked. */
export const MAX_SPACE_COLUMNS = 32;

export interface RevealOptions {
  /** Line breaks as ⏎ pieces (the queue's one-line preview). */
  oneLine?: boolean;
  /** Stop once about this many characters would be shown (the rest is not scanned). */
  limit?: number;
}

const LETTER = /\p{L}/u;
const LETTER_OR_MARK = /[\p{L}\p{M}]/u;

/**
 * `text` in pieces; their `text` joined is `text` again, so nothing is ever dropped, only
 * shown otherwise.
 */
export function reveal(text: string, options: RevealOptions = {}): Piece[] {
  const chars = Array.from(text);
  const pieces: Piece[] = [];
  const limit = options.limit ?? Number.POSITIVE_INFINITY;
  let plain = '';
  let shown = 0;
  const flush = (): void => {
    if (plain) pieces.push({ kind: 'text', text: plain });
    plain = '';
  };
  const push = (piece: Piece, width: number): void => {
    flush();
    pieces.push(piece);
    shown += width;
  };
  let i = 0;
  while (i < chars.length && shown < limit) {
    const char = chars[i];
    if (isHiddenAt(chars, i)) {
      const codePoint = char.codePointAt(0)!;
      const label = `⟦${codePointLabel(codePoint)}⟧`;
      push({ kind: 'hidden', text: char, codePoint, label, name: characterName(codePoint), effect: effectOf(codePoint) }, label.length);
      i += 1;
    } else if (char === '\n') {
      const end = blankRunEnd(chars, i);
      const count = countNewlines(chars, i, end) - 1;
      if (count > MAX_BLANK_LINES) {
        // The line break before and after stay what they are: the mark stands on a line of its own.
        const inner = chars.slice(i + 1, end - 1).join('');
        const breakPiece = (): Piece => (options.oneLine ? { kind: 'line-break', text: '\n' } : { kind: 'text', text: '\n' });
        push(breakPiece(), 1);
        const label = `⟦${count.toLocaleString('en-US')} blank lines⟧`;
        push({ kind: 'blank-lines', text: inner, count, label }, label.length);
        push(breakPiece(), 1);
        i = end;
      } else if (options.oneLine) {
        push({ kind: 'line-break', text: '\n' }, 1);
        i += 1;
      } else {
        plain += char;
        shown += 1;
        i += 1;
      }
    } else if (char === ' ' || char === '\t') {
      let end = i;
      let columns = 0;
      while (chars[end] === ' ' || chars[end] === '\t') columns += chars[end++] === '\t' ? 8 : 1;
      const run = chars.slice(i, end).join('');
      if (columns > MAX_SPACE_COLUMNS) {
        const label = `⟦${spaceRunLabel(run)}⟧`;
        push({ kind: 'spaces', text: run, count: run.length, label }, label.length);
      } else {
        plain += run;
        shown += options.oneLine ? 1 : run.length;
      }
      i = end;
    } else if (LETTER.test(char)) {
      let end = i;
      while (end < chars.length && LETTER_OR_MARK.test(chars[end]) && !isHiddenAt(chars, end)) end += 1;
      const word = chars.slice(i, end);
      const mixed = mixedScriptWord(word);
      if (mixed) push(mixed, word.length);
      else {
        plain += word.join('');
        shown += word.length;
      }
      i = end;
    } else {
      plain += char;
      shown += 1;
      i += 1;
    }
  }
  flush();
  return pieces;
}

/** Where a run of blank lines starting at the line break `start` ends (after its last line break). */
function blankRunEnd(chars: readonly string[], start: number): number {
  let end = start + 1;
  for (let j = end; j < chars.length; j += 1) {
    if (chars[j] === '\n') end = j + 1;
    else if (!(chars[j] === ' ' || chars[j] === '\t' || (chars[j] === '\r' && chars[j + 1] === '\n'))) break;
  }
  return end;
}

function countNewlines(chars: readonly string[], start: number, end: number): number {
  let count = 0;
  for (let j = start; j < end; j += 1) if (chars[j] === '\n') count += 1;
  return count;
}

function spaceRunLabel(run: string): string {
  const tabs = run.split('\t').length - 1;
  if (tabs === 0) return `${run.length} spaces`;
  if (tabs === run.length) return `${run.length} tabs`;
  return `${run.length - tabs} spaces and ${tabs} tabs`;
}

function mixedScriptWord(word: string[]): Extract<Piece, { kind: 'mixed-script' }> | null {
  const scripts = word.map((char) => (LETTER.test(char) ? scriptOf(char) : null));
  const present = new Set(scripts.filter((script): script is string => script !== null));
  if (!mixesScripts(present)) return null;
  const counts = new Map<string, number>();
  for (const script of scripts) if (script) counts.set(script, (counts.get(script) ?? 0) + 1);
  const main = [...counts.entries()].sort((a, b) => b[1] - a[1] || (a[0] === 'Latin' ? -1 : b[0] === 'Latin' ? 1 : 0))[0][0];
  return {
    kind: 'mixed-script',
    text: word.join(''),
    scripts: [main, ...[...present].filter((script) => script !== main)],
    letters: word.map((char, index) => ({ text: char, script: scripts[index] ?? '', foreign: scripts[index] !== null && scripts[index] !== main })),
  };
}

/** The pieces as one plain string with the marks written out: for titles, notifications, toasts. */
export function revealPlain(text: string, options: RevealOptions = {}): string {
  return reveal(text, options)
    .map((piece) => {
      if (piece.kind === 'text' || piece.kind === 'mixed-script') return options.oneLine ? piece.text.replace(/[ \t]+/g, ' ') : piece.text;
      if (piece.kind === 'line-break') return ' ⏎ ';
      return piece.label;
    })
    .join('');
}

// ── Size ───────────────────────────────────────────────────────────────────────────────────

/** "1,234 characters · 305 lines" */
export function describeSize(text: string): string {
  const characters = Array.from(text).length;
  const lines = text === '' ? 0 : text.replace(/\n$/, '').split('\n').length;
  const count = (n: number, one: string, many: string): string => `${n.toLocaleString('en-US')} ${n === 1 ? one : many}`;
  return `${count(characters, 'character', 'characters')} · ${count(lines, 'line', 'lines')}`;
}

// ── What was found ─────────────────────────────────────────────────────────────────────────

export interface Findings {
  /** Each hidden character once, with how often it occurs. */
  hidden: Array<{ codePoint: number; name: string; effect: Effect; count: number }>;
  /** Each mixed-script word once. */
  mixedWords: Array<{ word: string; scripts: string[]; foreign: string }>;
  /** The longest run of blank lines collapsed, 0 for none. */
  blankLines: number;
  /** The widest run of spaces marked, 0 for none. */
  spaces: number;
}

export function findingsOf(pieces: readonly Piece[]): Findings {
  const hidden = new Map<number, Findings['hidden'][number]>();
  const words = new Map<string, Findings['mixedWords'][number]>();
  let blankLines = 0;
  let spaces = 0;
  for (const piece of pieces) {
    if (piece.kind === 'hidden') {
      const entry = hidden.get(piece.codePoint) ?? { codePoint: piece.codePoint, name: piece.name, effect: piece.effect, count: 0 };
      entry.count += 1;
      hidden.set(piece.codePoint, entry);
    } else if (piece.kind === 'mixed-script' && !words.has(piece.text)) {
      const foreign = piece.letters.filter((letter) => letter.foreign).map((letter) => letter.text).join('');
      words.set(piece.text, { word: piece.text, scripts: piece.scripts, foreign });
    } else if (piece.kind === 'blank-lines') blankLines = Math.max(blankLines, piece.count);
    else if (piece.kind === 'spaces') spaces = Math.max(spaces, piece.count);
  }
  return { hidden: [...hidden.values()], mixedWords: [...words.values()], blankLines, spaces };
}

export function isClean(findings: Findings): boolean {
  return findings.hidden.length === 0 && findings.mixedWords.length === 0 && findings.blankLines === 0 && findings.spaces === 0;
}

const EFFECT_WORDS: Record<Effect, [string, string]> = {
  reorders: ['character that reorders text', 'characters that reorder text'],
  invisible: ['invisible character', 'invisible characters'],
  control: ['control character', 'control characters'],
};

/** What was found, in words: "2 characters that reorder text (U+202E, U+202C); a word mixing Latin and Cyrillic letters: “pаypal” (а is Cyrillic)". */
export function describeFindings(findings: Findings): string[] {
  const parts: string[] = [];
  for (const effect of ['reorders', 'control', 'invisible'] as const) {
    const found = findings.hidden.filter((entry) => entry.effect === effect);
    if (found.length === 0) continue;
    const total = found.reduce((sum, entry) => sum + entry.count, 0);
    const which = found.slice(0, 4).map((entry) => codePointLabel(entry.codePoint)).join(', ') + (found.length > 4 ? ', …' : '');
    parts.push(`${total} ${EFFECT_WORDS[effect][total === 1 ? 0 : 1]} (${which})`);
  }
  const tags = findings.hidden.filter((entry) => entry.codePoint >= 0xe0020 && entry.codePoint <= 0xe007e);
  if (tags.length > 0) parts.push('invisible tag characters, which can carry hidden instructions');
  for (const { word, scripts, foreign } of findings.mixedWords.slice(0, 3)) {
    parts.push(`a word mixing ${andList(scripts)} letters: “${word}” (${foreign} ${Array.from(foreign).length === 1 ? 'is' : 'are'} ${scripts.slice(1).join(' or ')})`);
  }
  if (findings.mixedWords.length > 3) parts.push(`${findings.mixedWords.length - 3} more words mixing scripts`);
  if (findings.blankLines > 0) parts.push(`${findings.blankLines.toLocaleString('en-US')} blank lines in a row`);
  if (findings.spaces > 0) parts.push(`a run of ${findings.spaces.toLocaleString('en-US')} spaces`);
  return parts;
}

function andList(items: readonly string[]): string {
  return items.length < 2 ? items.join('') : `${items.slice(0, -1).join(', ')} and ${items[items.length - 1]}`;
}

// ── The modify editor ──────────────────────────────────────────────────────────────────────

const TOKEN = /⟦(?:U\+([0-9A-F]{4,6})|([\d,]+) blank lines)⟧/g;
const BRACKET = '⟦';

/**
 * The text as the modify editor (a plain textarea, which cannot mark anything) shows it:
 * hidden characters, and the editor's own bracket ⟦, written as ⟦U+202E⟧; long runs of blank
 * lines as ⟦296 blank lines⟧. `fromEditable` turns what is left of these back.
 */
export function toEditable(text: string): string {
  return reveal(text)
    .map((piece) => {
      if (piece.kind === 'hidden' || piece.kind === 'blank-lines') return piece.label;
      return piece.text.replaceAll(BRACKET, `⟦${codePointLabel(BRACKET.codePointAt(0)!)}⟧`);
    })
    .join('');
}

/** Hidden characters typed or pasted into the editor, written as marks (blank lines are left alone). */
export function escapeHidden(text: string): string {
  const chars = Array.from(text);
  return chars.map((char, index) => (isHiddenAt(chars, index) ? `⟦${codePointLabel(char.codePointAt(0)!)}⟧` : char)).join('');
}

/**
 * The editor's text as the action to send: each mark left in place is the character (or the
 * blank lines) it stands for again; a deleted mark is gone. Only marks `toEditable` writes are
 * turned back: ⟦U+0041⟧ stays as typed.
 */
export function fromEditable(text: string): string {
  return text.replace(TOKEN, (token, hex: string | undefined, blank: string | undefined) => {
    if (blank !== undefined) return '\n'.repeat(Math.max(0, Number(blank.replaceAll(',', '')) - 1));
    const codePoint = Number.parseInt(hex!, 16);
    if (codePoint > 0x10ffff) return token;
    const char = String.fromCodePoint(codePoint);
    return char === BRACKET || HIDDEN.test(char) ? char : token;
  });
}

/** Whether the editor's text holds any mark `fromEditable` would turn back. */
export function hasMarks(text: string): boolean {
  return fromEditable(text) !== text;
}

/**
 * Where `offset` of `fromEditable(editable)` stands in the editor's text: a place inside what a
 * mark stands for is the mark's start. Lets a message about the text sent point at what the
 * reviewer sees.
 */
export function editableOffset(editable: string, offset: number): number {
  let sent = 0;
  let shown = 0;
  for (const match of editable.matchAll(TOKEN)) {
    const plain = match.index - shown;
    if (sent + plain >= offset) break;
    sent += plain;
    shown = match.index;
    const standsFor = fromEditable(match[0]).length;
    if (sent + standsFor > offset) return shown;
    sent += standsFor;
    shown += match[0].length;
  }
  return shown + (offset - sent);
}
