import { loadConfig } from '../config/load';
import { type Config, apiUrlOf } from '../config/settings';
import { describePolicy } from '../domain/routing/review-policy';
import { INSTALLATION } from '../domain/shared/principal';
import { packageVersion } from '../package-info';
import { freeBytesUnder } from '../system/disk-space';
import { CliError } from './errors';
import { openForReading } from './read-database';

interface Check {
  name: string;
  ok: boolean;
  detail: string;
}

async function checkDatabase(config: Config): Promise<Check[]> {
  try {
    const inspection = await openForReading(config);
    try {
      const figures = await inspection.statistics.statistics(INSTALLATION);
      return [
        { name: 'database', ok: true, detail: `${inspection.location} (reachable, schema up to date)` },
        { name: 'reviews', ok: true, detail: `${figures.pending_reviews} pending, ${figures.total_reviews - figures.pending_reviews} decided` },
      ];
    } finally {
      await inspection.close();
    }
  } catch (error) {
    if (!(error instanceof CliError)) throw error;
    return [{ name: 'database', ok: false, detail: error.message }];
  }
}

interface HealthReport {
  status?: string;
  version?: string;
  database?: string;
  storage?: string;
}

function describeBytes(bytes: number): string {
  const units = ['bytes', 'KiB', 'MiB', 'GiB', 'TiB'];
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit += 1;
  }
  return `${unit === 0 ? value : value.toFixed(1)} ${units[unit]}`;
}

/** Room on the disk under data_dir: as the running API's writes found it, and as the system counts it. */
async function checkDisk(config: Config, health: HealthReport | null): Promise<Check> {
  const free = await freeBytesUnder(config.data_dir);
  const room = free === null ? 'free space unknown' : `${describeBytes(free)} free under ${config.data_dir}`;
  if (health?.storage !== undefined && health.storage !== 'ok') return { name: 'disk', ok: false, detail: `${health.storage} (${room})` };
  return { name: 'disk', ok: true, detail: room };
}

async function checkApi(config: Config): Promise<{ check: Check; health: HealthReport | null }> {
  const url = apiUrlOf(config);
  let health: HealthReport | null = null;
  const check = async (): Promise<Check> => {
    const answer = await fetch(`${url}/health`, { signal: AbortSignal.timeout(3_000) });
    const body = (health = (await answer.json()) as HealthReport);
    if (answer.status !== 200) {
      return { name: 'api', ok: false, detail: `${url} answers ${answer.status}: database ${body.database ?? 'unknown'}, storage ${body.storage ?? 'unknown'}` };
    }
    if (config.enable_auth) {
      const probe = await fetch(`${url}/reviews?page_size=1`, {
        headers: { authorization: `Bearer ${config.api_key}` },
        signal: AbortSignal.timeout(3_000),
      });
      if (probe.status === 401) return { name: 'api', ok: false, detail: `${url} is up but refuses the configured api_key` };
    }
    const authentication = config.edition === 'hosted' ? "organizations' API keys" : config.enable_auth ? 'on' : 'off';
    return { name: 'api', ok: true, detail: `${url} (version ${body.version ?? 'unknown'}, authentication ${authentication})` };
  };
  try {
    return { check: await check(), health };
  } catch (error) {
    const cause = (error as { cause?: { code?: string } }).cause?.code;
    const reason = cause === 'ECONNREFUSED' ? 'nothing is listening' : cause ?? (error as Error).name;
    return { check: { name: 'api', ok: false, detail: `${url} is not reachable (${reason}); is greenlight start running?` }, health: null };
  }
}

/** Checks configuration, database and API; exits non-zero unless all are healthy. */
export async function runStatus(options: { config?: string }, out: NodeJS.WritableStream): Promise<void> {
  const { config, file } = loadConfig({ file: options.config });
  const api = await checkApi(config);
  const checks: Check[] = [
    { name: 'config', ok: true, detail: file ?? 'no config file; defaults and GREENLIGHT_* variables' },
    { name: 'edition', ok: true, detail: config.edition },
    ...(await checkDatabase(config)),
    await checkDisk(config, api.health),
    api.check,
    // Valid, or loading the configuration above would have stopped with the rule's problem.
    { name: 'policy', ok: true, detail: describePolicy(config.routing).join(`\n${' '.repeat(18)}`) },
  ];
  out.write(`Greenlight ${packageVersion}\n`);
  for (const check of checks) {
    out.write(`  ${check.name.padEnd(9)} ${check.ok ? 'ok  ' : 'FAIL'}  ${check.detail}\n`);
  }
  const failed = checks.filter((c) => !c.ok).map((c) => c.name);
  if (failed.length > 0) throw new CliError(`unhealthy: ${failed.join(', ')}`, 1);
}
