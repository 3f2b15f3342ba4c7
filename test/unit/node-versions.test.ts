import fs from 'node:fs';
import path from 'node:path';
import semver from 'semver';
import { describe, expect, it } from 'vitest';

const root = path.resolve(__dirname, '..', '..');
const manifest = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8')) as { engines: { node: string } };
const lock = JSON.parse(fs.readFileSync(path.join(root, 'package-lock.json'), 'utf8')) as {
  packages: Record<string, { version?: string; dev?: boolean; optional?: boolean; engines?: { node?: string } | string[] }>;
};

/**
 * The AI SDK 7 and the OpenAI SDK under @openai/agents declare Node 22 or later. They are
 * installed only to test the client's framework adapters against the frameworks' own packages
 * (the current major of each, as the adapters target), and those tests pass on Node 20; npm
 * warns about them at install, as the README says. Nothing Greenlight runs on may ask more.
 */
const FRAMEWORK_TEST_PACKAGES = /^node_modules\/(ai|@ai-sdk\/[^/]+|openai)$/;

describe('the supported Node.js versions', () => {
  it('are ones every installed package supports, but the frameworks the client\'s adapters are tested with', () => {
    const oldest = semver.minVersion(manifest.engines.node)!.version;
    const refusing = Object.entries(lock.packages)
      .filter(([name, entry]) => name !== '' && !entry.optional && !Array.isArray(entry.engines) && entry.engines?.node)
      .filter(([name, entry]) => !(entry.dev && FRAMEWORK_TEST_PACKAGES.test(name)))
      .filter(([, entry]) => !semver.satisfies(oldest, (entry.engines as { node: string }).node))
      .map(([name, entry]) => `${name}@${entry.version} wants node ${(entry.engines as { node: string }).node}`);
    expect(refusing).toEqual([]);
  });

  it('include the Node.js running the tests', () => {
    expect(semver.satisfies(process.version, manifest.engines.node)).toBe(true);
  });
});
