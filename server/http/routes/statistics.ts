import { Router } from 'express';
import type { StatisticsService } from '../../domain/reviews/statistics';
import { principalOf } from '../auth';
import { queryInteger } from '../params';

export function statisticsRoutes(statistics: StatisticsService): Router {
  const router = Router();

  /**
   * @openapi
   * /stats:
   *   get:
   *     operationId: getStatistics
   *     tags: [statistics]
   *     summary: Counts, averages and breakdowns over all reviews
   *     description: >-
   *       Computed by SQL aggregates at the time of the request. `avg_confidence_score` is null
   *       when no review carries a confidence; `avg_seconds_to_decision` is null until a review
   *       is decided. Reviews without a framework are left out of `framework_breakdown`;
   *       `urgency_breakdown` always lists all four urgencies.
   *     parameters:
   *       - name: organization_id
   *         in: query
   *         description: Only reviews of this organization.
   *         schema: { type: integer, minimum: 1, maximum: 2147483647 }
   *     responses:
   *       '200':
   *         description: The statistics.
   *         content:
   *           application/json:
   *             schema: { $ref: '#/components/schemas/Statistics' }
   *       '400': { $ref: '#/components/responses/BadRequest' }
   *       '401': { $ref: '#/components/responses/Unauthorized' }
   *       '403': { $ref: '#/components/responses/Forbidden' }
   *       '429': { $ref: '#/components/responses/TooManyRequests' }
   */
  router.get('/stats', async (req, res) => {
    const organizationId = queryInteger(req, 'organization_id', undefined);
    res.json(await statistics.statistics(principalOf(res).scope, organizationId));
  });

  return router;
}
