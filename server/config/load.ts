import fs from 'node:fs';
import path from 'node:path';
import {
  type Config,
  type ConfigKey,
  ConfigError,
  type ValueOrigin,
  SETTINGS,
  checkConsistency,
  defaultConfig,
  environmentName,
  findSetting,
} from './settings';

export const CONFIG_FILE_NAME = 'greenlight.yaml';

export interface ConfigSources {
  /** `--config`: must exist when given. */
  file?: string;
  env?: NodeJS.ProcessEnv;
  /** Command-line flags, already mapped to keys; values are text as typed. */
  flags?: Partial<Record<ConfigKey, string>>;
  /** How the command spells each flag, so an error names the one typed (default `--<key with dashes>`). */
  flagNames?: Partial<Record<ConfigKey, string>>;
  cwd?: string;
  /** Replaces built-in defaults (the desktop app keeps its data in the per-user directory). */
  defaults?: Partial<Config>;
  /** Applied over every source (settings the desktop app manages itself, such as LAN access). */
  overrides?: Partial<Config>;
}

export interface LoadedConfig {
  config: Config;
  /** The file that was read, or null when only defaults, environment and flags apply. */
  file: string | null;
}

/**
 * Layers defaults < config file < `GREENLIGHT_*` environment < flags, validating every value
 * on the way. Relative paths from the file are relative to the file; from the environment or
 * flags, to the working directory.
 */
export function loadConfig(sources: ConfigSources = {}): LoadedConfig {
  const env = sources.env ?? process.env;
  const cwd = sources.cwd ?? process.cwd();
  const file = locateConfigFile(sources.file, env, cwd);
  const config = { ...defaultConfig(), ...sources.defaults };
  const fileDir = file ? path.dirname(file) : cwd;
  const pathBase: Record<string, string> = { data_dir: fileDir, database_url: fileDir };

  if (file) {
    for (const [key, raw] of Object.entries(readConfigFile(file))) {
      apply(config, key, raw, { source: path.basename(file), isText: false });
    }
  }
  const overrides: Array<[ConfigKey, string, ValueOrigin]> = [];
  for (const s of SETTINGS) {
    const raw = env[environmentName(s.key)];
    if (raw !== undefined) overrides.push([s.key, raw, { source: environmentName(s.key), isText: true }]);
  }
  for (const [key, raw] of Object.entries(sources.flags ?? {})) {
    const source = sources.flagNames?.[key as ConfigKey] ?? `--${key.replace(/_/g, '-')}`;
    if (raw !== undefined) overrides.push([key as ConfigKey, raw, { source, isText: true }]);
  }
  for (const [key, raw, origin] of overrides) {
    apply(config, key, raw, origin);
    if (key in pathBase) pathBase[key] = cwd;
  }

  Object.assign(config, sources.overrides);
  checkConsistency(config);
  config.data_dir = path.resolve(pathBase.data_dir, config.data_dir);
  config.database_url = resolveDatabaseUrl(config.database_url, config.data_dir, pathBase.database_url);
  return { config, file };
}

function locateConfigFile(explicit: string | undefined, env: NodeJS.ProcessEnv, cwd: string): string | null {
  const requested = explicit ?? env.GREENLIGHT_CONFIG;
  if (requested) {
    const absolute = path.resolve(cwd, requested);
    if (!fs.existsSync(absolute)) throw new ConfigError(`config file not found: ${absolute}`);
    return absolute;
  }
  const conventional = path.join(cwd, CONFIG_FILE_NAME);
  return fs.existsSync(conventional) ? conventional : null;
}

function readConfigFile(file: string): Record<string, unknown> {
  let source: string;
  try {
    source = fs.readFileSync(file, 'utf8');
  } catch (error) {
    throw new ConfigError(`cannot read config file ${file}: ${(error as NodeJS.ErrnoException).code ?? String(error)}`);
  }
  // Loaded only when there is a file to read: a server started from the environment alone need not hold it.
  const YAML = require('yaml') as typeof import('yaml');
  const document = YAML.parseDocument(source);
  if (document.errors.length > 0) {
    const first = document.errors[0];
    const where = first.linePos ? ` (line ${first.linePos[0].line})` : '';
    const reason = first.message.split('\n')[0].replace(/ at line \d+, column \d+:?$/, '');
    throw new ConfigError(`${path.basename(file)} is not valid YAML${where}: ${reason}`);
  }
  const content: unknown = document.toJS();
  if (content === null || content === undefined) return {};
  if (typeof content !== 'object' || Array.isArray(content)) {
    throw new ConfigError(`${path.basename(file)} must be a mapping of settings (key: value)`);
  }
  return content as Record<string, unknown>;
}

function apply(config: Config, key: string, raw: unknown, origin: ValueOrigin): void {
  const definition = findSetting(key);
  if (!definition) {
    throw new ConfigError(`unknown setting "${key}" in ${origin.source}; known settings: ${SETTINGS.map((s) => s.key).join(', ')}`);
  }
  (config as unknown as Record<string, unknown>)[key] = definition.parse(raw, origin);
}

function resolveDatabaseUrl(url: string, dataDir: string, base: string): string {
  if (url === '') return `sqlite:${path.join(dataDir, 'greenlight.db')}`;
  if (/^postgres(ql)?:\/\//.test(url)) return checkedPostgresUrl(url);
  const match = /^sqlite:(?:\/\/)?(.+)$/.exec(url);
  if (!match || match[1] === ':memory:') {
    throw new ConfigError(`database_url must be empty, sqlite:<path to a database file> or postgres://user:password@host:5432/database (got ${JSON.stringify(url)})`);
  }
  return `sqlite:${path.resolve(base, match[1])}`;
}

function checkedPostgresUrl(url: string): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new ConfigError('database_url is not a valid postgres:// URL (special characters in the password must be percent-encoded)');
  }
  if (parsed.hostname === '' || parsed.pathname.replace(/^\//, '') === '') {
    throw new ConfigError('database_url must name a host and a database: postgres://user:password@host:5432/database');
  }
  return url;
}

/** The SQLite file a loaded config points at, or null when the database is PostgreSQL. */
export function sqliteFile(config: Pick<Config, 'database_url'>): string | null {
  return config.database_url.startsWith('sqlite:') ? config.database_url.slice('sqlite:'.length) : null;
}
