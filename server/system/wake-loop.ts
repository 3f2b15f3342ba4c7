/**
 * A look at an outbox that runs one at a time: `wake` starts one now, or once the one under way
 * ends; `sleep` schedules the next; a look that throws is reported and tried again shortly.
 * What the webhook and chat dispatchers share.
 */
export class WakeLoop {
  private timer: NodeJS.Timeout | undefined;
  private running = false;
  private again = false;
  private stopped = false;
  private current: Promise<void> = Promise.resolve();

  constructor(
    private readonly look: () => Promise<void>,
    private readonly onFailure: (error: unknown) => void,
    private readonly afterFailureMs: number,
  ) {}

  get isStopped(): boolean {
    return this.stopped;
  }

  /** Looks now (again once the look under way ends, if one is). */
  wake(): void {
    if (this.stopped) return;
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = true;
    this.current = this.look()
      .catch((error: unknown) => {
        this.onFailure(error);
        this.sleep(this.afterFailureMs);
      })
      .finally(() => {
        this.running = false;
        if (this.again) {
          this.again = false;
          this.wake();
        }
      });
  }

  /** The next look in `ms`, replacing one already scheduled. */
  sleep(ms: number): void {
    this.cancelSleep();
    if (this.stopped) return;
    this.timer = setTimeout(() => this.wake(), ms);
    this.timer.unref();
  }

  /** No look scheduled: something else will wake this. */
  cancelSleep(): void {
    clearTimeout(this.timer);
  }

  /** No more looks; resolves once the one under way has ended. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.cancelSleep();
    await this.current;
  }
}
