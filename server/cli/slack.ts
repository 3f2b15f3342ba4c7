import { slackManifest } from '../integrations/slack/manifest';

export interface ManifestCommandOptions {
  name: string;
  publicUrl?: string;
}

/** Prints the Slack app manifest: Socket Mode unless a public URL for Slack's requests is given. */
export function runSlackManifest(options: ManifestCommandOptions, out: NodeJS.WritableStream): void {
  out.write(`${JSON.stringify(slackManifest({ name: options.name, publicApiUrl: options.publicUrl }), null, 2)}\n`);
}
