import { EventEmitter } from 'node:events';
import { describe, expect, it } from 'vitest';
import { applyPermissionPolicy, applyWindowSecurity, isSafeExternalUrl, secureWebPreferences } from '../../main/modules/window-security';

const ORIGIN = 'http://127.0.0.1:8501';

/** Just enough of Electron's WebContents to drive its events. */
class FakeWebContents extends EventEmitter {
  openHandler: ((details: { url: string }) => { action: 'deny' }) | undefined;
  setWindowOpenHandler(handler: (details: { url: string }) => { action: 'deny' }): void {
    this.openHandler = handler;
  }
  navigate(url: string, event = 'will-navigate'): boolean {
    let prevented = false;
    this.emit(event, { preventDefault: () => (prevented = true) }, url);
    return prevented;
  }
}

function secured() {
  const contents = new FakeWebContents();
  const opened: string[] = [];
  applyWindowSecurity(contents, { origin: ORIGIN, openExternal: (url) => opened.push(url) });
  return { contents, opened };
}

describe('applyWindowSecurity', () => {
  it('lets the window navigate within the dashboard', () => {
    const { contents, opened } = secured();
    expect(contents.navigate(`${ORIGIN}/#/history`)).toBe(false);
    expect(opened).toEqual([]);
  });

  it.each(['https://example.com/docs', 'http://127.0.0.1:8000/docs', 'file:///etc/passwd', 'javascript:alert(1)', 'http://127.0.0.1:8502/'])(
    'keeps the window from navigating to %s',
    (url) => {
      const { contents } = secured();
      expect(contents.navigate(url)).toBe(true);
      expect(contents.navigate(url, 'will-redirect')).toBe(true);
    },
  );

  it('opens safe external links in the system browser instead', () => {
    const { contents, opened } = secured();
    contents.navigate('https://example.com/docs');
    contents.navigate('file:///etc/passwd');
    contents.navigate('http://example.com/plain');
    expect(opened).toEqual(['https://example.com/docs']);
  });

  it('never opens a new window, whatever the URL', () => {
    const { contents, opened } = secured();
    for (const url of [`${ORIGIN}/popup`, 'https://example.com/', 'about:blank', 'smb://share/x']) {
      expect(contents.openHandler?.({ url })).toEqual({ action: 'deny' });
    }
    expect(opened).toEqual(['https://example.com/']);
  });

  it('refuses to attach webviews', () => {
    const { contents } = secured();
    let prevented = false;
    contents.emit('will-attach-webview', { preventDefault: () => (prevented = true) });
    expect(prevented).toBe(true);
  });
});

describe('isSafeExternalUrl', () => {
  it.each([
    ['https://docs.example.com/page?x=1', true],
    ['http://example.com', false],
    ['https://user:pass@example.com', false],
    ['https://localhost/', false],
    ['mailto:a@example.com', false],
    ['not a url', false],
  ])('%s → %s', (url, safe) => {
    expect(isSafeExternalUrl(url)).toBe(safe);
  });
});

describe('applyPermissionPolicy', () => {
  it('grants notifications and nothing else', () => {
    let request: ((webContents: unknown, permission: string, callback: (granted: boolean) => void) => void) | undefined;
    let check: ((webContents: unknown, permission: string) => boolean) | undefined;
    applyPermissionPolicy({
      setPermissionRequestHandler: (handler) => (request = handler),
      setPermissionCheckHandler: (handler) => (check = handler),
    });
    const answers: Record<string, boolean> = {};
    for (const permission of ['notifications', 'media', 'geolocation', 'clipboard-read', 'openExternal', 'fullscreen']) {
      request?.(null, permission, (granted) => (answers[permission] = granted));
    }
    expect(answers).toEqual({ notifications: true, media: false, geolocation: false, 'clipboard-read': false, openExternal: false, fullscreen: false });
    expect(check?.(null, 'notifications')).toBe(true);
    expect(check?.(null, 'media')).toBe(false);
  });
});

describe('secureWebPreferences', () => {
  it('isolates and sandboxes every window, with no Node in the page', () => {
    expect(secureWebPreferences('/app/preload.cjs')).toMatchObject({
      preload: '/app/preload.cjs',
      contextIsolation: true,
      sandbox: true,
      nodeIntegration: false,
      webSecurity: true,
      webviewTag: false,
    });
  });
});
