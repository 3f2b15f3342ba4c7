import type { TrayItem } from './tray-menu';

/**
 * Electron's objects, as far as the shell uses them. `desktop.ts` passes the real ones; the
 * modules never import Electron, so they run under Node with stand-ins where its binary cannot.
 */
export interface ElectronParts {
  app: AppLike;
  BrowserWindow: new (options: WindowOptions) => WindowLike;
  Notification: { new (options: { title: string; body: string; icon: string }): NotificationLike; isSupported(): boolean };
  Tray: new (iconPath: string) => TrayLike;
  Menu: { buildFromTemplate(template: TrayItem[]): MenuLike };
  dialog: { showErrorBox(title: string, content: string): void };
  ipcMain: IpcMainLike;
  shell: { openExternal(url: string): Promise<void> };
  /** The module, not its `defaultSession`, which exists only once the app is ready. */
  session: { readonly defaultSession: SessionLike };
  clipboard: { writeText(text: string): void };
}

export interface PreventableEvent {
  preventDefault(): void;
}

export interface AppLike {
  requestSingleInstanceLock(): boolean;
  getPath(name: 'userData'): string;
  whenReady(): Promise<void>;
  on(event: 'second-instance', listener: () => void): unknown;
  on(event: 'activate', listener: () => void): unknown;
  on(event: 'window-all-closed', listener: () => void): unknown;
  on(event: 'before-quit', listener: () => void): unknown;
  on(event: 'will-quit', listener: (event: PreventableEvent) => void): unknown;
  quit(): void;
  exit(code: number): void;
}

export interface WindowOptions {
  width: number;
  height: number;
  minWidth: number;
  minHeight: number;
  show: boolean;
  title: string;
  icon: string;
  webPreferences: Record<string, unknown>;
}

export interface WindowLike {
  readonly webContents: WebContentsLike & { send(channel: string, ...args: unknown[]): void };
  once(event: 'ready-to-show', listener: () => void): unknown;
  on(event: 'close', listener: (event: PreventableEvent) => void): unknown;
  loadURL(url: string): Promise<void>;
  isDestroyed(): boolean;
  isMinimized(): boolean;
  restore(): void;
  show(): void;
  hide(): void;
  focus(): void;
}

export interface WebContentsLike {
  on(event: 'will-navigate' | 'will-redirect', listener: (event: PreventableEvent, url: string) => void): unknown;
  on(event: 'will-attach-webview', listener: (event: PreventableEvent) => void): unknown;
  setWindowOpenHandler(handler: (details: { url: string }) => { action: 'deny' }): void;
}

export interface SessionLike {
  setPermissionRequestHandler(handler: (webContents: unknown, permission: string, callback: (granted: boolean) => void) => void): void;
  setPermissionCheckHandler(handler: (webContents: unknown, permission: string) => boolean): void;
}

export interface NotificationLike {
  on(event: 'click', listener: () => void): unknown;
  show(): void;
}

/** A menu Electron built from a template; the tray only hands it back. */
export type MenuLike = object;

export interface TrayLike {
  on(event: 'click', listener: () => void): unknown;
  setToolTip(text: string): void;
  setContextMenu(menu: MenuLike | null): void;
}

export interface IpcMainLike {
  handle(channel: string, listener: (event: { senderFrame: { url: string } | null }, ...args: unknown[]) => unknown): void;
}
