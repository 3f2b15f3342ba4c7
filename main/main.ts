import { isHeadless } from './modules/launch-mode';

/**
 * The entry of the desktop app. Headless mode never loads Electron's modules, so it also runs
 * under plain Node (and is tested that way where Electron cannot be launched).
 */
async function main(): Promise<void> {
  if (isHeadless(process.argv, process.env)) {
    const { runHeadless } = await import('./headless.js');
    await runHeadless(process.argv);
    return;
  }
  const { runDesktop } = await import('./desktop.js');
  await runDesktop();
}

main().catch((error: unknown) => {
  process.stderr.write(`greenlight: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
