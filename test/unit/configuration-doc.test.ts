import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { configurationDoc } from '../../server/config/configuration-doc';
import { SETTINGS, environmentName } from '../../server/config/settings';

const page = path.resolve(__dirname, '..', '..', 'docs', 'configuration.md');

describe('docs/configuration.md', () => {
  it('is what `npm run docs:config` writes from the settings table now', () => {
    const current = fs.readFileSync(page, 'utf8');
    expect(current, 'docs/configuration.md is stale: run `npm run docs:config` and commit it').toBe(configurationDoc(current));
  });

  it('has a row for every setting, naming its environment variable', () => {
    const current = fs.readFileSync(page, 'utf8');
    for (const setting of SETTINGS) {
      const row = current.split('\n').find((line) => line.startsWith(`| \`${setting.key}\` |`));
      expect(row ?? `no row for ${setting.key}`).toContain(`\`${environmentName(setting.key)}\``);
    }
  });
});
