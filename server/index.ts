/**
 * The server's public entry: what the desktop shell (`main/`) may use. Nothing here knows
 * about Electron.
 */
export { main as runCli } from './cli/main';
export { loadConfig, type LoadedConfig } from './config/load';
export { type Config, ConfigError, apiUrlOf, dashboardUrlOf } from './config/settings';
export type { ReviewRecord, Urgency } from './domain/reviews/records';
export { oneLine } from './domain/shared/text';
export { createLogger, type Logger } from './logging';
export { type DesktopServer, startDesktopServer } from './app/desktop-handle';
export { type RunningDashboard, startDashboard } from './app/dashboard-server';
export { PortInUseError } from './app/listen';
