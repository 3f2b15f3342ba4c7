import type { Database } from './database';
import { type Logger, silentLogger } from '../logging';

/**
 * How long after a change commits its organization's entries are chained. Every change of the
 * organization that commits in between is chained in the same batch, under one lock of its head.
 */
export const LINK_DELAY_MS = 100;

/** How often each process chains what no process owes a link: entries of a process that stopped first. */
export const SWEEP_EVERY_MS = 10_000;

/**
 * PostgreSQL's audit entries commit with their changes into `audit_pending` and are chained into
 * their organizations' logs after the commit, a batch at a time (migration 0029). This process
 * chains its own changes' entries shortly after they commit, and sweeps for what others left.
 * Whoever reads a log chains it first (`link`), so a reader never misses a committed entry.
 * A batch that fails is logged and left for the next sweep: nothing is lost while it waits.
 */
export class AuditLinker {
  private readonly owed = new Set<number>();
  private timer: NodeJS.Timeout | null = null;
  private sweeper: NodeJS.Timeout | null = null;
  private running: Promise<void> | null = null;
  private sweeping: Promise<void> | null = null;
  private stopped = false;

  constructor(
    private readonly db: Database,
    private readonly log: Logger = silentLogger,
  ) {}

  /** Chains the organization's committed entries now; resolves once they are in its log. */
  async link(organizationId: number): Promise<void> {
    await this.db.selectRows('SELECT audit_link($organization) AS linked', { organization: organizationId });
  }

  /** Chains these organizations' entries soon: changes of theirs have just committed. */
  later(organizationIds: Iterable<number>): void {
    if (this.stopped) return;
    for (const organizationId of organizationIds) this.owed.add(organizationId);
    this.schedule();
  }

  /** Sweeps now, then every `SWEEP_EVERY_MS`. */
  async start(): Promise<void> {
    await this.sweep();
    if (this.stopped) return;
    this.sweeper = setInterval(() => {
      this.sweeping ??= this.sweep().finally(() => (this.sweeping = null));
    }, SWEEP_EVERY_MS);
    this.sweeper.unref();
  }

  /** Chains what is owed now and schedules nothing more; resolves once it is chained. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.sweeper) clearInterval(this.sweeper);
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    await Promise.all([this.running, this.sweeping]);
    await this.linkEach(this.takeOwed());
  }

  /** Every organization with entries waiting: those of a process that stopped before it chained them. */
  private async sweep(): Promise<void> {
    try {
      const waiting = await this.db.selectRows<{ organization_id: number }>('SELECT DISTINCT organization_id FROM audit_pending', {});
      await this.linkEach(waiting.map((row) => Number(row.organization_id)));
    } catch (error) {
      this.log.warn('could not look for audit entries to chain', { error: String(error) });
    }
  }

  private schedule(): void {
    if (this.timer || this.running || this.owed.size === 0) return;
    this.timer = setTimeout(() => {
      this.timer = null;
      this.running = this.linkEach(this.takeOwed()).finally(() => {
        this.running = null;
        if (!this.stopped) this.schedule();
      });
    }, LINK_DELAY_MS);
    this.timer.unref();
  }

  private takeOwed(): number[] {
    const owed = [...this.owed];
    this.owed.clear();
    return owed;
  }

  private async linkEach(organizationIds: readonly number[]): Promise<void> {
    for (const organizationId of organizationIds) {
      try {
        await this.link(organizationId);
      } catch (error) {
        this.log.warn('could not chain audit entries; the next sweep will', { organization_id: organizationId, error: String(error) });
      }
    }
  }
}
