/**
 * What this process keeps of each organization's configuration between requests (its compiled
 * routing rules, its workflows), loaded once and shared by every create until an organization
 * change (`OrganizationChange`) for it is published here: then it is forgotten and loaded again
 * by the next create.
 *
 * An entry is the load's promise, so creates arriving together share one load. A load that was
 * under way when its organization changed is never kept: `forget` takes it out of the map, and
 * only the load still in the map may stay (a failed one leaves). Its callers use what it read,
 * as if they had read just before the change.
 *
 * What remains: a create in another process, between a change's commit and the moment that
 * process hears of it (a PostgreSQL notification, then a read of the outbox), uses the
 * organization's previous configuration. While a process may not hear of every change (its
 * relay lost its connection) it keeps nothing and loads for every create.
 */
export class PerOrganization<T> {
  private readonly entries = new Map<number, Promise<T>>();
  private keeping = true;

  constructor(private readonly load: (organizationId: number) => Promise<T>) {}

  get(organizationId: number): Promise<T> {
    const kept = this.entries.get(organizationId);
    if (kept) return kept;
    const loading = this.load(organizationId);
    if (!this.keeping) return loading;
    this.entries.set(organizationId, loading);
    loading.catch(() => {
      if (this.entries.get(organizationId) === loading) this.entries.delete(organizationId);
    });
    return loading;
  }

  forget(organizationId: number): void {
    this.entries.delete(organizationId);
  }

  /** Forgets every organization's, and keeps nothing while `keeping` is false (see `EventFeed.hearing`). */
  forgetAll(keeping: boolean): void {
    this.entries.clear();
    this.keeping = keeping;
  }
}
