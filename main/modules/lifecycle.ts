import type { AppLike } from './electron-parts';

type Stop = () => void | Promise<void>;

/**
 * The app's life as every module sees it: whether it is on its way out, whether a tray keeps it
 * running without a window, and what must be stopped before it exits.
 */
export class Lifecycle {
  /** From the first step of quitting on, windows close instead of hiding and no further module is enabled. */
  quitting = false;
  /** A tray icon brings the window back and quits, so closing the window leaves the app running. */
  hasTray = false;
  private readonly stops: Stop[] = [];
  private stopping: Promise<void> | undefined;

  constructor(private readonly app: Pick<AppLike, 'quit' | 'exit'>) {}

  quit(): void {
    this.quitting = true;
    this.app.quit();
  }

  exit(code: number): void {
    this.quitting = true;
    this.app.exit(code);
  }

  /** Something a module started that quitting must stop, such as a server agents are waiting on. */
  onQuit(stop: Stop): void {
    this.stops.push(stop);
  }

  get hasSomethingToStop(): boolean {
    return this.stops.length > 0;
  }

  /** Latest first, as the modules were enabled in reverse; once, however often quitting is asked for. */
  stop(): Promise<void> {
    this.stopping ??= (async () => {
      for (const stop of [...this.stops].reverse()) await stop();
    })();
    return this.stopping;
  }
}
