/**
 * How the dashboard writes times, in one place so every view writes them alike: moments as
 * "24 Nov 2026, 14:03" (the reviewer's time zone, 24-hour clock), lengths of time as "45s",
 * "12m", "3h 5m", "2d". Built from parts rather than a locale's format, which varies between
 * browsers and ICU versions ("Sep" or "Sept", "14:03" or "2:03 PM").
 */

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
const twoDigits = (n: number): string => String(n).padStart(2, '0');

/** A moment, in the reviewer's time zone: "24 Nov 2026, 14:03". */
export function formatDateTime(iso: string): string {
  const at = new Date(iso);
  return `${at.getDate()} ${MONTHS[at.getMonth()]} ${at.getFullYear()}, ${twoDigits(at.getHours())}:${twoDigits(at.getMinutes())}`;
}

/** A calendar day as the API names it ("2026-11-24"): "24 Nov 2026", or "24 Nov" without the year. */
export function formatDay(day: string, withYear = true): string {
  const [year, month, date] = day.split('-').map(Number);
  return `${date} ${MONTHS[month - 1]}${withYear ? ` ${year}` : ''}`;
}

/** A length of time: "45s", "12m", "3h 5m", "2d". */
export function formatSpan(milliseconds: number): string {
  const seconds = Math.max(0, Math.floor(milliseconds / 1000));
  if (seconds < 60) return `${seconds}s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 60) return `${minutes}m`;
  const hours = Math.floor(minutes / 60);
  if (hours < 48) return `${hours}h ${minutes % 60}m`;
  return `${Math.floor(hours / 24)}d`;
}

/** How long ago `fromIso` was. */
export function formatAge(fromIso: string, nowMs: number): string {
  return formatSpan(nowMs - Date.parse(fromIso));
}

/** Time left until `untilIso`. */
export function formatTimeLeft(untilIso: string, nowMs: number): string {
  const left = Date.parse(untilIso) - nowMs;
  return left <= 0 ? 'expiring now' : `${formatSpan(left)} left`;
}

/** A duration the API gives in seconds, or a dash when there is none. */
export function formatSeconds(seconds: number | null): string {
  return seconds === null ? '—' : formatSpan(seconds * 1000);
}
