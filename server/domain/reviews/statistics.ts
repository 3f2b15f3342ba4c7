import type { Clock } from '../shared/unit-of-work';
import type { Scope } from '../shared/principal';
import type { StatisticsSource } from './ports';
import type { Statistics } from './records';
import { scopeOf } from '../shared/scope';

/** The figures of GET /stats, over the caller's reviews or the organization a filter names. */
export class StatisticsService {
  constructor(
    private readonly source: StatisticsSource,
    private readonly clock: Clock = Date.now,
  ) {}

  async statistics(scope: Scope, organizationId?: number): Promise<Statistics> {
    return this.source.statistics(scopeOf(scope, organizationId), this.clock());
  }
}
