import { contextBridge, ipcRenderer } from 'electron';
import { CHANNELS, type DesktopBridge } from './bridge';

/**
 * The only things the dashboard can ask of the desktop shell: a few named, typed functions.
 * There is no generic `invoke(channel)`, and no Node or Electron object crosses the bridge.
 * Bundled into one file at build time, because a sandboxed preload cannot require local files.
 */
const bridge: DesktopBridge = {
  desktop: true,
  getApiKey: () => ipcRenderer.invoke(CHANNELS.getApiKey),
  getSettings: () => ipcRenderer.invoke(CHANNELS.getSettings),
  updateSettings: (change) => ipcRenderer.invoke(CHANNELS.updateSettings, { ...change }),
  copyApiKey: () => ipcRenderer.invoke(CHANNELS.copyApiKey),
  onOpenReview: (listener) => {
    ipcRenderer.on(CHANNELS.openReview, (_event, reviewId: unknown) => {
      if (typeof reviewId === 'number' && Number.isInteger(reviewId)) listener(reviewId);
    });
  },
};

contextBridge.exposeInMainWorld('greenlight', bridge);
