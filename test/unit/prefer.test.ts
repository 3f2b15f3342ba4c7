import { describe, expect, it } from 'vitest';
import { preferredWaitSeconds } from '../../server/http/waiting';

describe('preferredWaitSeconds', () => {
  it.each([
    [undefined, undefined],
    ['wait=10', 10],
    ['WAIT = 7', 7],
    ['respond-async, wait=30', 30],
    ['wait="15"', 15],
    ['handling=lenient; x=1, wait=3', 3],
    ['wait=abc', undefined],
    ['wait=-1', undefined],
    ['return=minimal', undefined],
  ])('reads %j as %j', (header, expected) => {
    expect(preferredWaitSeconds(header)).toBe(expected);
  });
});
