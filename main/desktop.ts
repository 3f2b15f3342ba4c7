import path from 'node:path';
import { app, BrowserWindow, clipboard, dialog, ipcMain, Menu, Notification, session, shell, Tray } from 'electron';
import { createLogger } from '../server';
import { bridge } from './modules/bridge-handlers';
import { appReady, createDesktopContext, enableModules } from './modules/desktop-module';
import { mainWindow } from './modules/main-window';
import { notifications } from './modules/notifications';
import { quitting } from './modules/quitting';
import { servers } from './modules/servers';
import { singleInstance } from './modules/single-instance';
import { tray } from './modules/tray';

/**
 * The desktop shell: the API and the dashboard server in this process, one secured window on
 * the dashboard, native notifications for urgent reviews, and a tray that keeps the server
 * running while the window is closed. Each step is a module in `modules/`, tested under Node.
 */
export async function runDesktop(): Promise<void> {
  const ctx = createDesktopContext({
    electron: { app, BrowserWindow, clipboard, dialog, ipcMain, Menu, Notification, session, shell, Tray },
    log: createLogger(),
    env: process.env,
    resources: path.join(__dirname, '..', '..', 'resources'),
    preload: path.join(__dirname, '..', 'preload', 'preload.cjs'),
  });
  await enableModules(ctx, [
    singleInstance,
    // Before anything starts that quitting must stop.
    quitting,
    appReady,
    servers,
    notifications,
    tray,
    bridge,
    // Last: the dashboard it loads asks the bridge for the API key at once.
    mainWindow,
  ]);
}
