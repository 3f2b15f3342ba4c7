import type { DesktopModule } from './desktop-module';

/**
 * How the app ends. Closing the last window quits unless a tray keeps the app running; quitting
 * waits for what the modules registered to stop (the API answers the agents waiting on it) and
 * then exits.
 */
export const quitting: DesktopModule = {
  enable({ electron: { app }, lifecycle }) {
    app.on('before-quit', () => {
      lifecycle.quitting = true;
    });
    app.on('window-all-closed', () => {
      if (!lifecycle.hasTray) lifecycle.quit();
    });
    app.on('will-quit', (event) => {
      if (!lifecycle.hasSomethingToStop) return;
      event.preventDefault();
      void lifecycle.stop().then(() => app.exit(0));
    });
  },
};
