import { EventEmitter } from 'node:events';
import { Writable } from 'node:stream';
import { createLogger } from '../../server';
import { createDesktopContext, type DesktopContext, type DesktopModule, enableModules } from '../../main/modules/desktop-module';
import type { ElectronParts, MenuLike, NotificationLike, TrayLike, WindowLike, WindowOptions } from '../../main/modules/electron-parts';
import type { TrayItem } from '../../main/modules/tray-menu';
import { freePorts } from './cli';
import { makeTempDir } from './temp';

/**
 * Stand-ins for Electron's objects, as far as the desktop shell uses them, recording what was
 * done to them: Electron's binary cannot run on every machine, and the shell's modules take
 * these objects as parameters. They behave as Electron documents, in the few ways the shell
 * relies on (the order of quitting, a prevented close, a window shown once ready).
 */
export interface FakeOptions {
  userData: string;
  /** False: another Greenlight already holds the lock. */
  singleInstanceLock?: boolean;
  /** False: the desktop has no system tray, and Electron's Tray throws. */
  tray?: boolean;
  notificationsSupported?: boolean;
}

function preventable(): { prevented: boolean; preventDefault(): void } {
  const event = {
    prevented: false,
    preventDefault: () => {
      event.prevented = true;
    },
  };
  return event;
}

export class FakeWebContents extends EventEmitter {
  readonly sent: unknown[][] = [];
  openHandler: ((details: { url: string }) => { action: 'deny' }) | undefined;

  setWindowOpenHandler(handler: (details: { url: string }) => { action: 'deny' }): void {
    this.openHandler = handler;
  }

  send(channel: string, ...args: unknown[]): void {
    this.sent.push([channel, ...args]);
  }

  /** The page tries to go to `url`; true when the window kept it from going. */
  navigate(url: string): boolean {
    const event = preventable();
    this.emit('will-navigate', event, url);
    return event.prevented;
  }
}

export type FakeElectron = ReturnType<typeof fakeElectron>;

export function fakeElectron(options: FakeOptions) {
  const windows: FakeWindow[] = [];
  const shownNotifications: FakeNotification[] = [];
  const trays: FakeTray[] = [];
  const errorBoxes: Array<{ title: string; content: string }> = [];
  const openedExternally: string[] = [];
  const clipboard = { text: '', writeText: (text: string) => void (clipboard.text = text) };
  const permissions: { request?: (webContents: unknown, permission: string, callback: (granted: boolean) => void) => void } = {};
  const handlers = new Map<string, (event: { senderFrame: { url: string } | null }, ...args: unknown[]) => unknown>();
  const openWindows = (): FakeWindow[] => windows.filter((window) => !window.isDestroyed());

  class FakeApp extends EventEmitter {
    exitCode: number | undefined;
    private quittingNow = false;
    private resolveExit: (code: number) => void = () => {};
    /** Resolves with the exit code once the app exits. */
    readonly exited = new Promise<number>((resolve) => (this.resolveExit = resolve));

    requestSingleInstanceLock(): boolean {
      return options.singleInstanceLock ?? true;
    }
    getPath(): string {
      return options.userData;
    }
    whenReady(): Promise<void> {
      return Promise.resolve();
    }
    /** As Electron: before-quit, then each window asked to close; once all are closed, will-quit, then the end. */
    quit(): void {
      this.emit('before-quit');
      this.quittingNow = true;
      for (const window of openWindows()) window.close();
      this.quittingNow = false;
      if (openWindows().length > 0) return;
      const event = preventable();
      this.emit('will-quit', event);
      if (!event.prevented) this.exit(0);
    }
    exit(code: number): void {
      if (this.exitCode !== undefined) return;
      this.exitCode = code;
      this.resolveExit(code);
    }
    /** Electron says nothing of the last window closing while it quits. */
    lastWindowClosed(): void {
      if (!this.quittingNow) this.emit('window-all-closed');
    }
  }
  const app = new FakeApp();

  class FakeWindow extends EventEmitter implements WindowLike {
    readonly webContents = new FakeWebContents();
    visible = false;
    focused = false;
    loadedUrl: string | undefined;
    private minimized = false;
    private destroyed = false;

    constructor(readonly options: WindowOptions) {
      super();
      windows.push(this);
    }
    async loadURL(url: string): Promise<void> {
      this.loadedUrl = url;
      setImmediate(() => this.emit('ready-to-show'));
    }
    isDestroyed(): boolean {
      return this.destroyed;
    }
    isMinimized(): boolean {
      return this.minimized;
    }
    minimize(): void {
      this.minimized = true;
      this.focused = false;
    }
    restore(): void {
      this.minimized = false;
    }
    show(): void {
      this.visible = true;
    }
    hide(): void {
      this.visible = false;
      this.focused = false;
    }
    focus(): void {
      this.focused = true;
    }
    /** The close button: the window closes unless a listener prevents it. */
    close(): void {
      const event = preventable();
      this.emit('close', event);
      if (event.prevented) return;
      this.destroyed = true;
      this.visible = false;
      if (openWindows().length === 0) app.lastWindowClosed();
    }
  }

  class FakeNotification implements NotificationLike {
    private clickListener: () => void = () => {};
    static isSupported(): boolean {
      return options.notificationsSupported ?? true;
    }
    constructor(readonly content: { title: string; body: string; icon: string }) {}
    on(_event: 'click', listener: () => void): this {
      this.clickListener = listener;
      return this;
    }
    show(): void {
      shownNotifications.push(this);
    }
    click(): void {
      this.clickListener();
    }
  }

  class FakeMenu {
    constructor(readonly items: TrayItem[]) {}
  }

  class FakeTray implements TrayLike {
    tooltip = '';
    menu: TrayItem[] = [];
    private clickListener: () => void = () => {};
    constructor(readonly iconPath: string) {
      if (options.tray === false) throw new Error('no StatusNotifier on this desktop');
      trays.push(this);
    }
    on(_event: 'click', listener: () => void): this {
      this.clickListener = listener;
      return this;
    }
    setToolTip(text: string): void {
      this.tooltip = text;
    }
    setContextMenu(menu: MenuLike | null): void {
      this.menu = menu instanceof FakeMenu ? menu.items : [];
    }
    click(): void {
      this.clickListener();
    }
    choose(label: string): void {
      const item = this.menu.find((candidate) => candidate.label === label);
      if (!item?.click) throw new Error(`no menu item ${label}`);
      item.click();
    }
  }

  const parts: ElectronParts = {
    app,
    BrowserWindow: FakeWindow,
    Notification: FakeNotification,
    Tray: FakeTray,
    Menu: { buildFromTemplate: (template) => new FakeMenu(template) },
    dialog: { showErrorBox: (title, content) => void errorBoxes.push({ title, content }) },
    ipcMain: { handle: (channel, listener) => void handlers.set(channel, listener) },
    shell: { openExternal: async (url) => void openedExternally.push(url) },
    session: {
      defaultSession: {
        setPermissionRequestHandler: (handler) => (permissions.request = handler),
        setPermissionCheckHandler: () => undefined,
      },
    },
    clipboard,
  };

  return {
    parts,
    app,
    windows,
    shownNotifications,
    trays,
    errorBoxes,
    openedExternally,
    clipboard,
    /** A call through the preload bridge, from a page at `pageUrl`. */
    invoke: async (pageUrl: string, channel: string, ...args: unknown[]): Promise<unknown> => {
      const handler = handlers.get(channel);
      if (!handler) throw new Error(`nothing handles ${channel}`);
      return handler({ senderFrame: { url: pageUrl } }, ...args);
    },
    permissionGranted: (permission: string): boolean => {
      let granted = false;
      permissions.request?.(null, permission, (answer) => (granted = answer));
      return granted;
    },
  };
}

export interface DesktopOnFakes {
  ctx: DesktopContext;
  electron: FakeElectron;
  userData: string;
  /** The ports the configuration gives the API and the dashboard. */
  apiPort: number;
  dashboardPort: number;
  enable(...modules: DesktopModule[]): Promise<void>;
  /** What was logged, one object per line. */
  logs(): Array<{ level: string; message: string }>;
  /** Stops what the modules started and removes the user's directory. */
  close(): Promise<void>;
}

/**
 * A desktop context as `desktop.ts` builds it, on fakes of Electron: a fresh user directory,
 * and the API and dashboard on free ports of this machine.
 */
export async function desktopOnFakes(options: Omit<FakeOptions, 'userData'> = {}): Promise<DesktopOnFakes> {
  const temp = makeTempDir('greenlight-desktop-');
  const electron = fakeElectron({ ...options, userData: temp.dir });
  const lines: string[] = [];
  const stream = new Writable({
    write(chunk, _encoding, done) {
      lines.push(String(chunk));
      done();
    },
  });
  const [apiPort, dashboardPort] = await freePorts(2);
  const ctx = createDesktopContext({
    electron: electron.parts,
    log: createLogger({ stream, format: 'json' }),
    env: { GREENLIGHT_API_PORT: String(apiPort), GREENLIGHT_DASHBOARD_PORT: String(dashboardPort) },
    resources: '/opt/greenlight/resources',
    preload: '/opt/greenlight/preload/preload.cjs',
  });
  return {
    ctx,
    electron,
    userData: temp.dir,
    apiPort,
    dashboardPort,
    enable: (...modules) => enableModules(ctx, modules),
    logs: () => lines.map((line) => JSON.parse(line) as { level: string; message: string }),
    close: async () => {
      await ctx.lifecycle.stop();
      temp.remove();
    },
  };
}
