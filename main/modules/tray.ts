import type { DesktopModule } from './desktop-module';
import type { TrayLike } from './electron-parts';
import { trayMenu, trayTooltip } from './tray-menu';

/** Reviews arrive and are decided in bursts; the count is read again once a burst settles. */
const REFRESH_DELAY_MS = 300;

/**
 * A tray icon that keeps Greenlight running for the agents while its window is closed, showing
 * the pending count, with Open and Quit. Where the system has no tray, closing the window quits.
 */
export const tray: DesktopModule = {
  enable({ electron: { Tray, Menu }, files, servers, events, lifecycle, log }) {
    let icon: TrayLike;
    try {
      icon = new Tray(files.trayIcon);
    } catch (error) {
      log.warn('no system tray here; closing the window quits Greenlight', { error: String(error) });
      return;
    }
    lifecycle.hasTray = true;
    const open = (): void => events.emit('window.requested', { reviewId: null });
    icon.on('click', open);

    const refresh = async (): Promise<void> => {
      const api = servers.api;
      if (!api) return;
      const pending = await api.pendingCount();
      icon.setToolTip(trayTooltip(pending));
      icon.setContextMenu(Menu.buildFromTemplate(trayMenu(pending, { open, quit: () => lifecycle.quit() })));
    };
    // The count stays as it was when it cannot be read, as while the API closes.
    const refreshNow = (): void => void refresh().catch((error: unknown) => log.warn('could not count the pending reviews for the tray', { error: String(error) }));
    let timer: NodeJS.Timeout | undefined;
    const refreshSoon = (): void => {
      clearTimeout(timer);
      timer = setTimeout(refreshNow, REFRESH_DELAY_MS);
    };
    events.on('review.created', refreshSoon);
    events.on('review.decided', refreshSoon);
    events.on('api.started', refreshNow);
    lifecycle.onQuit(() => clearTimeout(timer));
    refreshNow();
  },
};
