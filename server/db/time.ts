/** Rows keep epoch milliseconds; records carry ISO 8601 UTC strings with a `Z`. */
export function isoTime(epochMs: number): string {
  return new Date(epochMs).toISOString();
}
