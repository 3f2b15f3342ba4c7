import type { DesktopBridge } from '../../main/bridge';

export type { DesktopBridge, DesktopSettingsView, NotificationLevel } from '../../main/bridge';

/** The desktop shell's bridge, or undefined in an ordinary browser (the same build runs in both). */
export function desktopBridge(): DesktopBridge | undefined {
  return (globalThis as { greenlight?: DesktopBridge }).greenlight;
}
