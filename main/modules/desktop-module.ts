import { randomBytes } from 'node:crypto';
import path from 'node:path';
import type { Logger } from '../../server';
import { DesktopEvents } from './desktop-events';
import { SettingsStore } from './desktop-settings';
import type { ElectronParts } from './electron-parts';
import { InProcessServers } from './in-process-servers';
import { Lifecycle } from './lifecycle';

interface DesktopFiles {
  /** The per-user directory: greenlight.yaml, `data/` and desktop-settings.json. */
  userData: string;
  icon: string;
  trayIcon: string;
  preload: string;
}

/** What the modules share. Each module takes what it needs from here and holds nothing of another. */
export interface DesktopContext {
  readonly electron: ElectronParts;
  readonly log: Logger;
  readonly files: DesktopFiles;
  readonly settings: SettingsStore;
  /** Started by the `servers` module; the modules after it read them. */
  readonly servers: InProcessServers;
  readonly events: DesktopEvents;
  readonly lifecycle: Lifecycle;
}

/**
 * One concern of the desktop shell, enabled once, in the order of the list in `desktop.ts`.
 * What it must stop at quit, it registers with `ctx.lifecycle.onQuit`.
 */
export interface DesktopModule {
  enable(ctx: DesktopContext): void | Promise<void>;
}

interface ContextSources {
  electron: ElectronParts;
  log: Logger;
  /** For the configuration, as the CLI reads it (GREENLIGHT_API_PORT and the rest). */
  env: NodeJS.ProcessEnv;
  /** The directory of the app's icons. */
  resources: string;
  preload: string;
}

export function createDesktopContext({ electron, log, env, resources, preload }: ContextSources): DesktopContext {
  const userData = electron.app.getPath('userData');
  const settings = new SettingsStore(path.join(userData, 'desktop-settings.json'), () => randomBytes(24).toString('base64url'));
  const events = new DesktopEvents();
  return {
    electron,
    log,
    files: { userData, icon: path.join(resources, 'icon.png'), trayIcon: path.join(resources, 'tray.png'), preload },
    settings,
    servers: new InProcessServers({ userData, env, settings, events, log }),
    events,
    lifecycle: new Lifecycle(electron.app),
  };
}

/** Windows, the tray, notifications and sessions exist only once Electron is ready. */
export const appReady: DesktopModule = {
  enable: ({ electron }) => electron.app.whenReady(),
};

/**
 * Enables each module once the one before has finished. A module that ends the app (a second
 * launch, a taken port) leaves it quitting, and the rest are not enabled; one that fails is
 * shown in a dialog, because a desktop app started from a menu has no terminal to print to.
 */
export async function enableModules(ctx: DesktopContext, modules: readonly DesktopModule[]): Promise<void> {
  try {
    for (const module of modules) {
      if (ctx.lifecycle.quitting) return;
      await module.enable(ctx);
    }
  } catch (error) {
    ctx.electron.dialog.showErrorBox('Greenlight could not start', error instanceof Error ? error.message : String(error));
    ctx.lifecycle.exit(1);
  }
}
