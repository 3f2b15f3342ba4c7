import type { PreventableEvent, SessionLike, WebContentsLike } from './electron-parts';

/**
 * Electron's security checklist, applied to every window: navigation stays on the dashboard's
 * own origin, new windows are never opened (safe external links go to the system browser),
 * embedded webviews are refused, and the only permission granted is notifications.
 */

export const ALLOWED_PERMISSIONS: ReadonlySet<string> = new Set(['notifications']);

export function sameOrigin(url: string, origin: string): boolean {
  try {
    return new URL(url).origin === origin;
  } catch {
    return false;
  }
}

/** Only ordinary https links to a named host leave the app, and only to the system browser. */
export function isSafeExternalUrl(url: string): boolean {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return false;
  }
  return parsed.protocol === 'https:' && parsed.username === '' && parsed.password === '' && parsed.hostname.includes('.');
}

export function applyWindowSecurity(webContents: WebContentsLike, policy: { origin: string; openExternal(url: string): void }): void {
  const keepInside = (event: PreventableEvent, url: string): void => {
    if (sameOrigin(url, policy.origin)) return;
    event.preventDefault();
    if (isSafeExternalUrl(url)) policy.openExternal(url);
  };
  webContents.on('will-navigate', keepInside);
  webContents.on('will-redirect', keepInside);
  webContents.on('will-attach-webview', (event) => event.preventDefault());
  webContents.setWindowOpenHandler(({ url }) => {
    if (isSafeExternalUrl(url)) policy.openExternal(url);
    return { action: 'deny' };
  });
}

export function applyPermissionPolicy(session: SessionLike): void {
  session.setPermissionRequestHandler((_webContents, permission, callback) => callback(ALLOWED_PERMISSIONS.has(permission)));
  session.setPermissionCheckHandler((_webContents, permission) => ALLOWED_PERMISSIONS.has(permission));
}

/** The settings every Greenlight window is created with. */
export function secureWebPreferences(preload: string): Record<string, unknown> {
  return {
    preload,
    contextIsolation: true,
    sandbox: true,
    nodeIntegration: false,
    nodeIntegrationInWorker: false,
    nodeIntegrationInSubFrames: false,
    webSecurity: true,
    allowRunningInsecureContent: false,
    experimentalFeatures: false,
    webviewTag: false,
    spellcheck: true,
  };
}
