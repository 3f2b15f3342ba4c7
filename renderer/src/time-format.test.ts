import { describe, expect, it } from 'vitest';
import { formatDateTime, formatDay, formatSeconds, formatSpan, formatTimeLeft } from './time-format';

describe('how the dashboard writes times', () => {
  it('writes a moment as day, short month, year and a 24-hour time, whatever the locale', () => {
    expect(formatDateTime(new Date(2026, 8, 4, 9, 3).toISOString())).toBe('4 Sep 2026, 09:03');
    expect(formatDateTime(new Date(2026, 10, 24, 23, 59).toISOString())).toBe('24 Nov 2026, 23:59');
  });

  it('writes an API day without shifting it across time zones', () => {
    expect(formatDay('2026-11-24')).toBe('24 Nov 2026');
    expect(formatDay('2026-01-01', false)).toBe('1 Jan');
  });

  it('writes ages, durations and time left in one short style', () => {
    expect(formatSpan(45_900)).toBe('45s');
    expect(formatSpan(12 * 60_000)).toBe('12m');
    expect(formatSpan((3 * 60 + 5) * 60_000)).toBe('3h 5m');
    expect(formatSpan(50 * 3_600_000)).toBe('2d');
    expect(formatSeconds(4_320)).toBe('1h 12m');
    expect(formatSeconds(null)).toBe('—');
    expect(formatTimeLeft(new Date(600_000).toISOString(), 0)).toBe('10m left');
    expect(formatTimeLeft(new Date(0).toISOString(), 1)).toBe('expiring now');
  });
});
