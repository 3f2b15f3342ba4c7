import { randomBytes } from 'node:crypto';
import os from 'node:os';
import path from 'node:path';
import { app, BrowserWindow, clipboard, dialog, ipcMain, Menu, nativeImage, Notification, session, shell, Tray } from 'electron';
import {
  type Config,
  createLogger,
  loadConfig,
  PortInUseError,
  type RunningDashboard,
  type DesktopServer,
  startDashboard,
  startDesktopServer,
} from '../server';
import { CHANNELS, type DesktopSettingsChange, type DesktopSettingsView } from './bridge';
import { registerBridgeHandlers } from './modules/bridge-handlers';
import { changeSettings, configOverrides, type DesktopSettings, lanUrls, readSettings, writeSettings } from './modules/desktop-settings';
import { createReviewNotifier } from './modules/notifications';
import { portConflictMessage } from './modules/port-conflict';
import { trayMenu, trayTooltip } from './modules/tray-menu';
import { applyPermissionPolicy, applyWindowSecurity, secureWebPreferences } from './modules/window-security';

const RESOURCES = path.join(__dirname, '..', '..', 'resources');
const PRELOAD = path.join(__dirname, '..', 'preload', 'preload.cjs');

/**
 * The desktop shell: the API and the dashboard server in this process, one secured window on
 * the dashboard, native notifications for urgent reviews, and a tray that keeps the server
 * running while the window is closed. Each concern's logic lives in `modules/`.
 */
export function runDesktop(): void {
  if (!app.requestSingleInstanceLock()) {
    app.quit();
    return;
  }

  const log = createLogger();
  const userData = app.getPath('userData');
  const settingsFile = path.join(userData, 'desktop-settings.json');
  let settings: DesktopSettings = readSettings(settingsFile);
  let config: Config;
  let api: DesktopServer | undefined;
  let dashboard: RunningDashboard | undefined;
  let window: BrowserWindow | undefined;
  let tray: Tray | undefined;
  let quitting = false;
  const unsubscribe: Array<() => void> = [];

  const loadDesktopConfig = (): Config =>
    loadConfig({ cwd: userData, defaults: { data_dir: path.join(userData, 'data') }, overrides: configOverrides(settings) }).config;

  const notifier = createReviewNotifier({
    createNotification: (content) => new Notification({ ...content, icon: path.join(RESOURCES, 'icon.png') }),
    level: () => (Notification.isSupported() ? settings.notifications : 'off'),
    onClick: (reviewId) => {
      showWindow();
      if (reviewId !== null) window?.webContents.send(CHANNELS.openReview, reviewId);
    },
    timers: { setTimeout, clearTimeout: (handle) => clearTimeout(handle as NodeJS.Timeout) },
  });

  function showWindow(): void {
    if (!window || window.isDestroyed()) createWindow();
    if (window!.isMinimized()) window!.restore();
    window!.show();
    window!.focus();
  }

  function createWindow(): void {
    const origin = new URL(dashboard!.url).origin;
    window = new BrowserWindow({
      width: 1280,
      height: 800,
      minWidth: 420,
      minHeight: 480,
      show: false,
      title: 'Greenlight',
      icon: path.join(RESOURCES, 'icon.png'),
      webPreferences: secureWebPreferences(PRELOAD),
    });
    applyWindowSecurity(window.webContents, { origin, openExternal: (url) => void shell.openExternal(url) });
    window.once('ready-to-show', () => window?.show());
    window.on('close', (event) => {
      // With a tray the server keeps running for the agents; Quit is in the tray menu.
      if (!quitting && tray) {
        event.preventDefault();
        window?.hide();
      }
    });
    void window.loadURL(dashboard!.url);
  }

  async function refreshTray(): Promise<void> {
    if (!tray || !api) return;
    const pending = await api.pendingCount();
    tray.setToolTip(trayTooltip(pending));
    tray.setContextMenu(Menu.buildFromTemplate(trayMenu(pending, { open: showWindow, quit: () => app.quit() })));
  }

  async function startApi(): Promise<void> {
    config = loadDesktopConfig();
    try {
      api = await startDesktopServer(config, { log });
    } catch (error) {
      if (!(error instanceof PortInUseError)) throw error;
      const { title, message } = portConflictMessage(config.api_port, path.join(userData, 'greenlight.yaml'));
      dialog.showErrorBox(title, message);
      app.exit(1);
      return;
    }
    log.info(`Greenlight API listening on ${api.url}`, { database: api.databaseLocation, lanAccess: settings.lanAccess });
    let trayRefresh: NodeJS.Timeout | undefined;
    const scheduleTrayRefresh = (): void => {
      clearTimeout(trayRefresh);
      trayRefresh = setTimeout(() => void refreshTray(), 300);
    };
    unsubscribe.push(
      api.events.on('review.created', (review) => notifier.reviewCreated(review)),
      api.events.on('review.created', scheduleTrayRefresh),
      api.events.on('review.decided', scheduleTrayRefresh),
    );
    void refreshTray();
  }

  async function stopApi(): Promise<void> {
    for (const off of unsubscribe.splice(0)) off();
    await api?.close();
    api = undefined;
  }

  function settingsView(): DesktopSettingsView {
    return {
      notifications: settings.notifications,
      lanAccess: settings.lanAccess,
      lanUrls: settings.lanAccess ? lanUrls(os.networkInterfaces(), config.api_port) : [],
      apiKey: settings.lanAccess ? settings.lanApiKey : null,
    };
  }

  async function updateSettings(change: DesktopSettingsChange): Promise<DesktopSettingsView> {
    const before = settings;
    settings = changeSettings(settings, change, () => randomBytes(24).toString('base64url'));
    writeSettings(settingsFile, settings);
    if (before.lanAccess !== settings.lanAccess) {
      // Rebinding the API is a restart; agents waiting at this moment get a 503 with their review_id.
      await stopApi();
      await startApi();
    }
    return settingsView();
  }

  async function start(): Promise<void> {
    applyPermissionPolicy(session.defaultSession);
    await startApi();
    if (!api) return;
    try {
      dashboard = await startDashboard(config, { apiUrl: `http://127.0.0.1:${config.api_port}`, log });
    } catch (error) {
      if (!(error instanceof PortInUseError)) throw error;
      // The window needs a port, not that one: another Greenlight may be serving its dashboard there.
      dashboard = await startDashboard({ ...config, dashboard_port: 0 }, { apiUrl: `http://127.0.0.1:${config.api_port}`, log });
    }
    const dashboardOrigin = new URL(dashboard.url).origin;
    registerBridgeHandlers(ipcMain, () => dashboardOrigin, {
      getApiKey: () => (config.enable_auth ? config.api_key : null),
      getSettings: settingsView,
      updateSettings,
      copyApiKey: () => {
        if (settings.lanApiKey) clipboard.writeText(settings.lanApiKey);
      },
    });
    try {
      tray = new Tray(nativeImage.createFromPath(path.join(RESOURCES, 'tray.png')));
      tray.on('click', showWindow);
      void refreshTray();
    } catch (error) {
      log.warn('no system tray here; closing the window quits Greenlight', { error: String(error) });
    }
    createWindow();
  }

  app.on('second-instance', showWindow);
  app.on('activate', showWindow);
  app.on('window-all-closed', () => {
    if (!tray) app.quit();
  });
  app.on('before-quit', () => {
    quitting = true;
  });
  app.on('will-quit', (event) => {
    if (!api && !dashboard) return;
    event.preventDefault();
    notifier.dispose();
    void (async () => {
      await stopApi();
      await dashboard?.close();
      dashboard = undefined;
      app.exit(0);
    })();
  });
  app
    .whenReady()
    .then(start)
    .catch((error: unknown) => {
      dialog.showErrorBox('Greenlight could not start', error instanceof Error ? error.message : String(error));
      app.exit(1);
    });
}
