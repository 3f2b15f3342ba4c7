import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { hostedBodies, organizationAgentKey } from './hosted-rules';
import { median } from './http';
import { type CreateLoad, createLoad, type LoadOptions } from './load';
import { postgresUnavailable, withBenchDatabase } from './postgres';
import { type BenchProcess, startGreenlight } from './processes';

/**
 * `node dist/bench/alternate.js <checkout A> <checkout B> [--hosted] [--processes P] [--rounds N] [--seconds S]`
 *
 * Two builds of Greenlight (each checkout built with `npm run build`) creating reviews on one
 * PostgreSQL database, taking turns, at 32 connections shared by one API process (or `--processes`
 * of them, each with a data directory of its own, as a scaled-out deployment runs): how to tell a
 * change from this machine's drift, which moves a section's figures by a third between runs of
 * `npm run bench`. `--hosted`: an organization's agent key, the organization holding the bench's
 * 50 routing rules and 10 workflows; otherwise self-hosted creates. Each build has a database of
 * its own, which it migrates, so a change to the schema can be measured too. Prints every round,
 * then the medians and B against A.
 */
const CONNECTIONS = 32;

interface Arguments {
  builds: [string, string];
  hosted: boolean;
  processes: number;
  rounds: number;
  seconds: number;
}

function parse(args: string[]): Arguments {
  const value = (flag: string, fallback: number): number => {
    const at = args.indexOf(flag);
    return at >= 0 ? Number(args[at + 1]) : fallback;
  };
  const builds = args.filter((arg, i) => !arg.startsWith('--') && !['--processes', '--rounds', '--seconds'].includes(args[i - 1]));
  if (builds.length !== 2) throw new Error('usage: alternate.js <checkout A> <checkout B> [--hosted] [--processes P] [--rounds N] [--seconds S]');
  for (const build of builds) {
    if (!fs.existsSync(path.join(build, 'dist', 'server'))) throw new Error(`${build} is not built: run npm run build there first`);
  }
  return { builds: [path.resolve(builds[0]), path.resolve(builds[1])], hosted: args.includes('--hosted'), processes: value('--processes', 1), rounds: value('--rounds', 3), seconds: value('--seconds', 10) };
}

async function main(): Promise<void> {
  const { builds, hosted, processes, rounds, seconds } = parse(process.argv.slice(2));
  const unavailable = await postgresUnavailable();
  if (unavailable) throw new Error(unavailable);
  const operatorKey = randomBytes(24).toString('base64url');
  const settings: NodeJS.ProcessEnv = hosted ? { GREENLIGHT_EDITION: 'hosted', GREENLIGHT_OPERATOR_KEY: operatorKey } : {};
  const loads: [CreateLoad[], CreateLoad[]] = [[], []];
  await withBenchDatabase((first) => withBenchDatabase(async (second) => {
    const databases = [first, second];
    const options: LoadOptions[] = databases.map(() => ({ connections: CONNECTIONS, postgres: true }));
    for (let round = 0; round < rounds; round += 1) {
      for (const [i, root] of builds.entries()) {
        const dirs = Array.from({ length: processes }, () => fs.mkdtempSync(path.join(os.tmpdir(), 'greenlight-alternate-')));
        const servers: BenchProcess[] = [];
        try {
          for (const dir of dirs) servers.push(await startGreenlight(dir, { databaseUrl: databases[i], settings, root }));
          if (hosted && round === 0) {
            const key = await organizationAgentKey(servers[0].url, operatorKey, { withRules: true });
            options[i] = { ...options[i], bodies: hostedBodies(), headers: { authorization: `Bearer ${key}` } };
          }
          const load = await createLoad(servers, seconds, options[i]);
          loads[i].push(load);
          console.log(`round ${round + 1}, ${'AB'[i]}: ${described(load)}`);
        } finally {
          for (const server of servers) await server.stop();
          for (const dir of dirs) fs.rmSync(dir, { recursive: true, force: true });
        }
      }
    }
  }));
  const [a, b] = loads.map(medians);
  console.log(`\nA ${builds[0]}: ${described(a)}\nB ${builds[1]}: ${described(b)}`);
  console.log(
    `B / A: throughput ${(b.perSecond / a.perSecond).toFixed(2)}×, server CPU per create ${(b.cpuMsPerCreate / a.cpuMsPerCreate).toFixed(2)}×, database CPU per create ${(b.databaseCpuMsPerCreate / a.databaseCpuMsPerCreate).toFixed(2)}×`,
  );
}

function medians(loads: CreateLoad[]): CreateLoad {
  return {
    perSecond: median(loads.map((load) => load.perSecond)),
    cpuMsPerCreate: median(loads.map((load) => load.cpuMsPerCreate)),
    databaseCpuMsPerCreate: median(loads.map((load) => load.databaseCpuMsPerCreate)),
  };
}

function described(load: CreateLoad): string {
  return `${Math.round(load.perSecond)} creates/s, server CPU ${load.cpuMsPerCreate.toFixed(3)} ms and database CPU ${load.databaseCpuMsPerCreate.toFixed(3)} ms per create`;
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});
