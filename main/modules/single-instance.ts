import type { DesktopModule } from './desktop-module';

/** One Greenlight per user: a second launch quits before starting anything, and the first brings its window forward (main-window.ts). */
export const singleInstance: DesktopModule = {
  enable({ electron: { app }, lifecycle }) {
    if (!app.requestSingleInstanceLock()) lifecycle.quit();
  },
};
