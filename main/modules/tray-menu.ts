/** Electron's MenuItemConstructorOptions, as far as the tray uses them. */
export interface TrayItem {
  label?: string;
  type?: 'separator' | 'normal';
  enabled?: boolean;
  click?: () => void;
}

export function trayTooltip(pending: number): string {
  return pending === 1 ? 'Greenlight — 1 review pending' : `Greenlight — ${pending} reviews pending`;
}

/** The tray's menu: the pending count, Open and Quit. Closing the window leaves the server running. */
export function trayMenu(pending: number, actions: { open(): void; quit(): void }): TrayItem[] {
  return [
    { label: trayTooltip(pending).replace('Greenlight — ', ''), enabled: false },
    { type: 'separator' },
    { label: 'Open Greenlight', click: actions.open },
    { label: 'Quit Greenlight', click: actions.quit },
  ];
}
