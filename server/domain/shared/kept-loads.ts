export interface KeptLoadsOptions<T> {
  /** Whether a loaded value may be kept: one that may not is loaded again by the next `get`. */
  keeps?: (value: T) => boolean;
  /** At most this many are kept; past it, the one kept longest is let go. */
  limit?: number;
}

/**
 * What this process keeps between requests of what it read from the database, by key, until
 * told that it changed (see `PerOrganization` for an organization's configuration, and the
 * organization keys `OrganizationService` knows).
 *
 * An entry is the load's promise, so requests arriving together share one load. A load that was
 * under way when it was forgotten is never kept: `forget` takes it out of the map, and only the
 * load still in the map may stay (a failed one leaves, as does a value `keeps` refuses). Its
 * callers use what it read, as if they had read just before the change. While `keeping` is false
 * (this process may not hear of every change) nothing is kept and every `get` loads.
 */
export class KeptLoads<K, T> {
  private readonly entries = new Map<K, Promise<T>>();
  private keeping = true;

  constructor(
    private readonly load: (key: K) => Promise<T>,
    private readonly options: KeptLoadsOptions<T> = {},
  ) {}

  get(key: K): Promise<T> {
    const kept = this.entries.get(key);
    if (kept) return kept;
    const loading = this.load(key);
    if (!this.keeping) return loading;
    this.entries.set(key, loading);
    const { keeps, limit } = this.options;
    if (limit !== undefined && this.entries.size > limit) this.entries.delete(this.entries.keys().next().value as K);
    const leave = (): void => {
      if (this.entries.get(key) === loading) this.entries.delete(key);
    };
    loading.then((value) => {
      if (keeps && !keeps(value)) leave();
    }, leave);
    return loading;
  }

  forget(key: K): void {
    this.entries.delete(key);
  }

  /** Forgets everything kept; with `keeping` false, keeps nothing from now on until told true (see `EventFeed.hearing`). */
  forgetAll(keeping: boolean = this.keeping): void {
    this.entries.clear();
    this.keeping = keeping;
  }
}
