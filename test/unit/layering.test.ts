import path from 'node:path';
import { describe, expect, it } from 'vitest';

const root = path.resolve(__dirname, '..', '..');

describe('the layering (dependency-cruiser, rules in .dependency-cruiser.cjs)', () => {
  it('has no import cycle, a domain that imports only itself, a desktop shell on the public entry and a dashboard that imports nothing of the server', async () => {
    const { cruise } = await import('dependency-cruiser');
    const config = (await import(path.join(root, '.dependency-cruiser.cjs'))).default;
    const result = await cruise(['server', 'main', 'renderer/src'], {
      ...config.options,
      baseDir: root,
      ruleSet: { forbidden: config.forbidden },
      validate: true,
    });
    const output = result.output as { summary: { violations: Array<{ rule: { name: string }; from: string; to: string }>; totalCruised: number } };
    expect(output.summary.totalCruised).toBeGreaterThan(150);
    expect(output.summary.violations.map((v) => `${v.rule.name}: ${v.from} → ${v.to}`)).toEqual([]);
  });
});
