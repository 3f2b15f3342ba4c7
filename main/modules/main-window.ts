import { CHANNELS } from '../bridge';
import type { DesktopModule } from './desktop-module';
import type { WindowLike } from './electron-parts';
import { applyPermissionPolicy, applyWindowSecurity, secureWebPreferences } from './window-security';

/**
 * The one window, on the dashboard and secured (window-security.ts). A second launch, the dock,
 * the tray and notifications bring it forward; closing it only hides it while a tray keeps the
 * app running.
 */
export const mainWindow: DesktopModule = {
  enable({ electron: { app, BrowserWindow, session, shell }, files, servers, events, lifecycle }) {
    applyPermissionPolicy(session.defaultSession);
    const url = servers.dashboardUrl;
    const origin = new URL(url).origin;

    const create = (): WindowLike => {
      const created = new BrowserWindow({
        width: 1280,
        height: 800,
        minWidth: 420,
        minHeight: 480,
        show: false,
        title: 'Greenlight',
        icon: files.icon,
        webPreferences: secureWebPreferences(files.preload),
      });
      applyWindowSecurity(created.webContents, { origin, openExternal: (external) => void shell.openExternal(external) });
      created.once('ready-to-show', () => created.show());
      created.on('close', (event) => {
        // With a tray the server keeps running for the agents; Quit is in the tray menu.
        if (!lifecycle.quitting && lifecycle.hasTray) {
          event.preventDefault();
          created.hide();
        }
      });
      void created.loadURL(url);
      return created;
    };

    let window = create();
    const show = (): WindowLike => {
      if (window.isDestroyed()) window = create();
      if (window.isMinimized()) window.restore();
      window.show();
      window.focus();
      return window;
    };
    app.on('second-instance', show);
    app.on('activate', show);
    events.on('window.requested', ({ reviewId }) => {
      const shown = show();
      if (reviewId !== null) shown.webContents.send(CHANNELS.openReview, reviewId);
    });
  },
};
