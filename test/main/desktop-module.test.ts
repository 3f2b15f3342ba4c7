import { setTimeout as delay } from 'node:timers/promises';
import { afterEach, describe, expect, it } from 'vitest';
import type { DesktopModule } from '../../main/modules/desktop-module';
import { type DesktopOnFakes, desktopOnFakes } from '../support/electron-fakes';

let desktop: DesktopOnFakes;
afterEach(() => desktop.close());

const step = (name: string, log: string[], ms = 0): DesktopModule => ({
  enable: async () => {
    log.push(`${name} starts`);
    await delay(ms);
    log.push(`${name} done`);
  },
});

describe('enabling the modules', () => {
  it('enables each module once the one before has finished', async () => {
    desktop = await desktopOnFakes();
    const log: string[] = [];
    await desktop.enable(step('servers', log, 20), step('window', log));
    expect(log).toEqual(['servers starts', 'servers done', 'window starts', 'window done']);
  });

  it('enables none after a module ends the app', async () => {
    desktop = await desktopOnFakes();
    const log: string[] = [];
    await desktop.enable(step('first', log), { enable: ({ lifecycle }) => lifecycle.exit(1) }, step('later', log));
    expect(log).toEqual(['first starts', 'first done']);
    expect(desktop.electron.app.exitCode).toBe(1);
  });

  it('a module that fails: a dialog says Greenlight could not start and why, and the app exits with 1', async () => {
    desktop = await desktopOnFakes();
    const log: string[] = [];
    const failing: DesktopModule = {
      enable: () => {
        throw new Error('greenlight.yaml: api_port must be a port number');
      },
    };
    await desktop.enable(failing, step('later', log));
    expect(desktop.electron.errorBoxes).toEqual([{ title: 'Greenlight could not start', content: 'greenlight.yaml: api_port must be a port number' }]);
    expect(desktop.electron.app.exitCode).toBe(1);
    expect(log).toEqual([]);
  });
});
