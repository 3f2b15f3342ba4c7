import { runCli } from '../server';

const PASSED_THROUGH = ['--config', '--port', '--host'];

/** The `start` options among the desktop app's arguments (Electron adds arguments of its own). */
export function startArguments(argv: readonly string[]): string[] {
  const picked: string[] = [];
  argv.forEach((arg, index) => {
    const [name, inline] = arg.split('=', 2);
    if (!PASSED_THROUGH.includes(name)) return;
    const value = inline ?? argv[index + 1];
    if (value !== undefined) picked.push(name, value);
  });
  return picked;
}

/**
 * The desktop app without a desktop: exactly `greenlight start --api-only` (the same command,
 * configuration sources, JSON logs on stdout and exit codes), for self-hosted servers.
 */
export async function runHeadless(argv: readonly string[]): Promise<void> {
  await runCli(['node', 'greenlight', 'start', '--api-only', ...startArguments(argv)]);
}
