import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isHiddenAt as dashboardSaysHidden } from '../../renderer/src/text/reveal';
import { AppError } from '../../server/domain/shared/errors';
import { escapeHidden, firstHiddenCharacter, isHiddenAt as serverSaysHidden, oneLine, refuseHiddenCharacters } from '../../server/domain/shared/text';

describe('hidden characters, as the server and the dashboard tell them', () => {
  it('the two classify every code point alike', () => {
    const disagree: string[] = [];
    for (let codePoint = 0; codePoint <= 0x10ffff; codePoint += 1) {
      const chars = [String.fromCodePoint(codePoint)];
      if (serverSaysHidden(chars, 0) !== dashboardSaysHidden(chars, 0)) disagree.push(codePoint.toString(16));
    }
    expect(disagree).toEqual([]);
  });

  it('the two agree in context too: variation selectors, joiners, CRLF', () => {
    fc.assert(
      fc.property(fc.array(fc.constantFrom('a', 'а', '⚠', '👩', '\u{1F3FD}', '\uFE0F', '\u200D', '\u200C', 'م', '葛', '\u{E0100}', '\r', '\n', ' ', '\u202E'), { maxLength: 12 }), (chars) => {
        chars.forEach((_, index) => expect(serverSaysHidden(chars, index)).toBe(dashboardSaysHidden(chars, index)));
      }),
    );
  });
});

describe('escapeHidden and oneLine', () => {
  it('write control, bidi and format characters out, so nothing printed can drive a terminal or reorder a line', () => {
    const action = 'ok\u001B[2K\u001B[1A\rdone \u202Eevil\u202C \u200B\u0085';
    expect(escapeHidden(action)).toBe('ok\\u{1B}[2K\\u{1B}[1A\\u{D}done \\u{202E}evil\\u{202C} \\u{200B}\\u{85}');
    expect(oneLine(`${action}\n\nnext\tline\r\n`, 200)).toBe('ok\\u{1B}[2K\\u{1B}[1A\\u{D}done \\u{202E}evil\\u{202C} \\u{200B}\\u{85} next line');
    expect(oneLine('⚠️ 👩🏽‍💻 ok', 20)).toBe('⚠️ 👩🏽‍💻 ok');
  });
});

describe('refuseHiddenCharacters', () => {
  const refusal = (fields: Record<string, unknown>): { detail: string; errors: unknown } | null => {
    try {
      refuseHiddenCharacters(fields);
      return null;
    } catch (error) {
      if (!(error instanceof AppError)) throw error;
      expect(error.status).toBe(400);
      return { detail: error.detail, errors: error.members.errors };
    }
  };

  it('names the field, the code point and where it stands', () => {
    expect(refusal({ proposed_action: 'echo "cleaning build cache" \u202E; rm -rf ~; #\u202C' })).toEqual({
      detail: 'proposed_action contains U+202E, a bidirectional control, which reorders the text shown around it, at character 29; this server refuses hidden characters (refuse_hidden_characters)',
      errors: [{ field: 'proposed_action', message: expect.stringMatching(/^contains U\+202E/) }],
    });
  });

  it('looks into metadata at any depth, keys included', () => {
    expect(refusal({ metadata: { ticket: { labels: ['ok', 'zero\u200Bwidth'] } } })?.errors).toEqual([
      { field: 'metadata.ticket.labels[1]', message: expect.stringMatching(/^contains U\+200B, an invisible character, at character 5/) },
    ]);
    expect(refusal({ metadata: { nested: { 'k\u001Bey': 1 } } })?.errors).toEqual([
      { field: 'metadata.nested', message: expect.stringMatching(/^has a key, "k\\\\u\{1B\}ey", that contains U\+001B, a control character/) },
    ]);
  });

  it('lets ordinary text through: line breaks, emoji, other scripts, numbers and nulls', () => {
    expect(refusal({ task_type: 'deploy', proposed_action: 'SELECT 1;\r\n-- ok\n\tDROP', agent_reasoning: '⚠️ Проверено 東京 می‌خواهم', framework: null, metadata: { n: 1, list: [true, null] } })).toBeNull();
    expect(firstHiddenCharacter('plain')).toBeNull();
  });
});
