import fs from 'node:fs';
import path from 'node:path';
import type { Edition } from '../config/settings';
import { configTemplate } from '../config/template';
import { CliError } from './errors';

export interface InitOptions {
  path: string;
  force?: boolean;
  edition?: Edition;
}

/** Writes the commented default configuration; never overwrites without `--force`. */
export function runInit(options: InitOptions, out: NodeJS.WritableStream): void {
  const target = path.resolve(options.path);
  if (fs.existsSync(target) && !options.force) {
    throw new CliError(`${target} already exists; use --force to overwrite it`, 1);
  }
  fs.mkdirSync(path.dirname(target), { recursive: true });
  fs.writeFileSync(target, configTemplate({ edition: options.edition }), { mode: 0o600 });
  out.write(`wrote ${target}\nnext: greenlight start --config ${path.relative(process.cwd(), target) || target}\n`);
}
