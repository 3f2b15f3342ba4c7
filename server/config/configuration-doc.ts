/**
 * `docs/configuration.md`, written from the `SETTINGS` table so that the page lists exactly the
 * keys, defaults and comments the loader and `greenlight init` use. The page's head (its intro
 * and the table of every key) is rewritten by `npm run docs:config`; what follows the marker
 * line is written by hand and kept as it is.
 */

import { NO_POLICY } from '../domain/routing/review-policy';
import { SETTINGS, environmentName } from './settings';

export const HAND_WRITTEN_MARKER =
  '<!-- Everything above this line is written by `npm run docs:config` from server/config/settings.ts; edit below it. -->';

const INTRO = `# Configuration

Greenlight reads its settings once at start, from four sources, each overriding the one
before: the built-in defaults, the config file, \`GREENLIGHT_*\` environment variables, and
command-line flags. Every key in the table below can be set in the file and in the
environment. An unknown key in the file, or a bad value anywhere, stops start-up with one
line naming the setting and where the bad value came from (exit code 2).

- **The file** is \`--config P\`, else \`$GREENLIGHT_CONFIG\`, else \`./greenlight.yaml\` if present.
  \`greenlight init\` writes one with every setting at its default and a comment above it (the
  comments of the table below); \`greenlight init --edition hosted\` sets the hosted edition.
  Relative paths in the file are relative to the file.
- **The environment** overrides the file: each key is \`GREENLIGHT_<KEY IN CAPITALS>\`, for
  example \`${environmentName('api_port')}=9000\`. Relative paths there, and in flags, are relative to
  the working directory. How lists and mappings are written there is under
  [In the environment](#in-the-environment).
- **Flags** override both: \`greenlight start\` has \`--port\`, \`--host\`, \`--dashboard-port\` and
  \`--allow-unauthenticated-network\`; \`greenlight mcp\` has \`--api-url\` (see [the command line](cli.md)).

The desktop app reads the same settings from \`greenlight.yaml\` in its \`data/\` folder (see
[The desktop app](desktop.md#where-data-lives)).`;

/** Markdown for one table cell: pipes would end the cell, and `<name>` would be taken for HTML. */
function cell(text: string): string {
  return text.replace(/\\/g, '\\\\').replace(/\|/g, '\\|').replace(/</g, '&lt;').replace(/\*/g, '\\*');
}

function typeOf(value: unknown): string {
  if (Array.isArray(value)) return 'list';
  if (typeof value === 'number') return 'integer';
  if (typeof value === 'boolean') return 'true / false';
  if (typeof value === 'string') return 'text';
  return 'mapping';
}

function defaultOf(value: unknown): string {
  if (value === NO_POLICY) return 'none (nothing routed, nothing expires)';
  if (value === '') return 'empty';
  if (Array.isArray(value)) return `\`${JSON.stringify(value).replace(/,/g, ', ')}\``;
  return `\`${typeof value === 'string' ? value : JSON.stringify(value)}\``;
}

export function settingsTable(): string {
  const rows = SETTINGS.map(
    (s) => `| \`${s.key}\` | ${typeOf(s.defaultValue)} | ${cell(defaultOf(s.defaultValue))} | \`${environmentName(s.key)}\` | ${cell(s.comment)} |`,
  );
  return ['| Key | Type | Default | Environment variable | What it does |', '|---|---|---|---|---|', ...rows].join('\n');
}

/**
 * The page as `npm run docs:config` writes it, given the page as it is now (`null` when there is
 * none yet): a fresh head, then the hand-written rest unchanged.
 */
export function configurationDoc(current: string | null): string {
  let handWritten = '';
  if (current !== null) {
    const at = current.indexOf(HAND_WRITTEN_MARKER);
    if (at < 0) throw new Error(`docs/configuration.md has lost its marker line; put it back above the hand-written part:\n${HAND_WRITTEN_MARKER}`);
    handWritten = current.slice(at + HAND_WRITTEN_MARKER.length).replace(/^\n+/, '');
  }
  return `${INTRO}\n\n## Every setting\n\n${settingsTable()}\n\n${HAND_WRITTEN_MARKER}\n\n${handWritten}`.replace(/\n*$/, '\n');
}
