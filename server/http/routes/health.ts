import { Router } from 'express';
import { packageVersion } from '../../package-info';

/**
 * @openapi
 * /health:
 *   get:
 *     tags: [health]
 *     summary: Is the service up and its database reachable?
 *     security: []
 *     responses:
 *       '200':
 *         description: Healthy.
 *         content:
 *           application/json:
 *             schema: { $ref: '#/components/schemas/Health' }
 *             example: { status: healthy, service: greenlight, version: 0.1.0, database: ok }
 *       '503':
 *         description: The database does not answer.
 *         content:
 *           application/json:
 *             schema: { $ref: '#/components/schemas/Health' }
 *             example: { status: unhealthy, service: greenlight, version: 0.1.0, database: 'error: SQLITE_CANTOPEN' }
 */
export function healthRoutes(pingDatabase: () => Promise<void>): Router {
  const router = Router();
  router.get('/health', async (_req, res) => {
    const report = { status: 'healthy', service: 'greenlight', version: packageVersion, database: 'ok' };
    try {
      await pingDatabase();
      res.json(report);
    } catch (error) {
      const code = (error as { original?: { code?: string } }).original?.code ?? (error as Error).message;
      res.status(503).json({ ...report, status: 'unhealthy', database: `error: ${code}` });
    }
  });
  return router;
}
