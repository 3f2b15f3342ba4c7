import path from 'node:path';
import { PortInUseError } from '../../server';
import type { DesktopContext, DesktopModule } from './desktop-module';
import { needsRestart } from './desktop-settings';
import { portConflictMessage } from './port-conflict';

/**
 * The API on its configured port and the dashboard server. If the API's port is taken, a dialog
 * says which and how to choose another, and the app exits. Turning LAN access on or off starts
 * the API again, bound and keyed for the new setting.
 */
export const servers: DesktopModule = {
  async enable(ctx) {
    ctx.lifecycle.onQuit(() => ctx.servers.close());
    if (!(await startApiOrExit(ctx))) return;
    await ctx.servers.startDashboard();
    ctx.settings.onChange(async (before, after) => {
      if (!needsRestart(before, after)) return;
      // Rebinding the API, or opening Slack with other tokens, is a restart; agents waiting at this moment get a 503 with their review_id.
      await ctx.servers.stopApi();
      await startApiOrExit(ctx);
    });
  },
};

async function startApiOrExit({ servers, electron, files, lifecycle }: DesktopContext): Promise<boolean> {
  try {
    await servers.startApi();
    return true;
  } catch (error) {
    if (!(error instanceof PortInUseError)) throw error;
    const { title, message } = portConflictMessage(servers.config.api_port, path.join(files.userData, 'greenlight.yaml'));
    electron.dialog.showErrorBox(title, message);
    lifecycle.exit(1);
    return false;
  }
}
