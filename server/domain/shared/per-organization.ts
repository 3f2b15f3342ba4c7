import { KeptLoads } from './kept-loads';

/**
 * What this process keeps of each organization's configuration between requests (its compiled
 * routing rules, its workflows), loaded once and shared by every create until an organization
 * change (`OrganizationChange`) for it is published here: then it is forgotten and loaded again
 * by the next create.
 *
 * What remains: a create in another process, between a change's commit and the moment that
 * process hears of it (a PostgreSQL notification, then a read of the outbox), uses the
 * organization's previous configuration. While a process may not hear of every change (its
 * relay lost its connection) it keeps nothing and loads for every create.
 */
export class PerOrganization<T> extends KeptLoads<number, T> {}
