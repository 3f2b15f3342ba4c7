import YAML from 'yaml';
import { SETTINGS, environmentName } from './settings';

/** The commented `greenlight.yaml` that `greenlight init` writes: every setting at its default. */
export function configTemplate(): string {
  const lines = [
    '# Greenlight configuration. Every setting is shown with its default.',
    '# Each one can be overridden by an environment variable GREENLIGHT_<KEY IN CAPITALS>',
    '# (for example GREENLIGHT_API_PORT=9000); command-line flags override both.',
    '',
  ];
  for (const s of SETTINGS) {
    lines.push(`# ${s.comment} (${environmentName(s.key)})`);
    lines.push(YAML.stringify({ [s.key]: s.defaultValue }).trimEnd());
    lines.push('');
  }
  return lines.join('\n');
}
