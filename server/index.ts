/**
 * The server's public entry: what the desktop shell (`main/`) may use. Nothing here knows
 * about Electron.
 */
export { main as runCli } from './cli/main';
export { loadConfig, type LoadedConfig } from './config/load';
export { type Config, ConfigError, apiUrlOf, dashboardUrlOf } from './config/settings';
export type { ReviewRecord, Urgency } from './domain/records';
export { createLogger, type Logger } from './logging';
export { PortInUseError, type RunningDashboard, type RunningServer, startDashboard, startServer } from './runtime';
