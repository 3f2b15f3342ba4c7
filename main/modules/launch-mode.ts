/** `--headless` or GREENLIGHT_HEADLESS=1: the server only, no window and no tray. */
export function isHeadless(argv: readonly string[], env: NodeJS.ProcessEnv): boolean {
  return argv.includes('--headless') || ['1', 'true', 'yes'].includes((env.GREENLIGHT_HEADLESS ?? '').trim().toLowerCase());
}
