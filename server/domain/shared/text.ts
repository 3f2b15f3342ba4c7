import { invalidInput } from './errors';

/**
 * `text` on one line for a person to read (a terminal, a notification): hidden characters
 * written out (`escapeHidden`), each run of whitespace one space, cut to at most `max`
 * characters with an ellipsis.
 */
export function oneLine(text: string, max: number): string {
  const line = escapeHidden(text).replace(/\s+/g, ' ').trim();
  return line.length <= max ? line : `${line.slice(0, max - 1)}…`;
}

// ── Hidden characters ───────────────────────────────────────────────────────────────────────
// The same rule as the dashboard's `renderer/src/text/reveal.ts` (which imports no server
// code); test/unit/hidden-characters.test.ts checks that the two classify every code point alike.

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

/** "U+202E" */
export function codePointLabel(codePoint: number): string {
  return `U+${codePoint.toString(16).toUpperCase().padStart(4, '0')}`;
}

/** The first hidden character of `text`: its code point and where it is (counting code points from 1). */
export function firstHiddenCharacter(text: string): { codePoint: number; position: number } | null {
  const chars = Array.from(text);
  const index = chars.findIndex((_, i) => isHiddenAt(chars, i));
  return index < 0 ? null : { codePoint: chars[index].codePointAt(0)!, position: index + 1 };
}

const REORDERING = /[\u061C\u200E\u200F\u202A-\u202E\u2066-\u2069]/u;

function kindOf(codePoint: number): string {
  const char = String.fromCodePoint(codePoint);
  if (REORDERING.test(char)) return 'a bidirectional control, which reorders the text shown around it';
  return /\p{Cc}/u.test(char) ? 'a control character' : 'an invisible character';
}

/**
 * Refuses (400, naming the field and the code point) text fields that hold a hidden
 * character: strings, and the keys and string values of objects and arrays, at any depth.
 * `fields` maps a field's name to its value; `because` ends the message.
 */
export function refuseHiddenCharacters(fields: Record<string, unknown>, because = 'this server refuses hidden characters (refuse_hidden_characters)'): void {
  for (const [name, value] of Object.entries(fields)) refuseIn(name, value, because);
}

function refuseIn(field: string, value: unknown, because: string): void {
  if (typeof value === 'string') {
    const found = firstHiddenCharacter(value);
    if (found) {
      throw invalidInput(field, `contains ${codePointLabel(found.codePoint)}, ${kindOf(found.codePoint)}, at character ${found.position}; ${because}`);
    }
  } else if (Array.isArray(value)) {
    value.forEach((item, index) => refuseIn(`${field}[${index}]`, item, because));
  } else if (typeof value === 'object' && value !== null) {
    for (const [key, item] of Object.entries(value)) {
      const found = firstHiddenCharacter(key);
      if (found) {
        throw invalidInput(field, `has a key, ${JSON.stringify(escapeHidden(key))}, that contains ${codePointLabel(found.codePoint)}, ${kindOf(found.codePoint)}; ${because}`);
      }
      refuseIn(`${field}.${key}`, item, because);
    }
  }
}

/**
 * `text` with each hidden character written out as `\u{1B}`: safe to print on a terminal
 * (no escape sequence runs, no bidi control reorders the line) and to put in a message.
 */
export function escapeHidden(text: string): string {
  const chars = Array.from(text);
  return chars.map((char, index) => (isHiddenAt(chars, index) ? `\\u{${char.codePointAt(0)!.toString(16).toUpperCase()}}` : char)).join('');
}
