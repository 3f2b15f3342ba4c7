import { Router } from 'express';
import type { DiskReport } from '../../system/disk-space';
import { invalidInput } from '../../domain/shared/errors';
import { packageVersion } from '../../package-info';

/**
 * @openapi
 * /health:
 *   get:
 *     operationId: getHealth
 *     tags: [health]
 *     summary: Is the service up, its database reachable and its disk writable?
 *     security: []
 *     responses:
 *       '200':
 *         description: Healthy.
 *         content:
 *           application/json:
 *             schema: { $ref: '#/components/schemas/Health' }
 *             example: { status: healthy, service: greenlight, version: 0.1.0, edition: self-hosted, database: ok, storage: ok, storage_free_bytes: 51234567890 }
 *       '400': { $ref: '#/components/responses/BadRequest' }
 *       '403': { $ref: '#/components/responses/Forbidden' }
 *       '503':
 *         description: The database does not answer, or the disk under data_dir is full (writes answer 507 until space is freed).
 *         content:
 *           application/json:
 *             schema: { $ref: '#/components/schemas/Health' }
 *             example: { status: unhealthy, service: greenlight, version: 0.1.0, edition: self-hosted, database: ok, storage: 'full: writes have failed for want of space since 2026-11-24T10:00:00.000Z; free space under /srv/greenlight-data', storage_free_bytes: 0 }
 */
export function healthRoutes(pingDatabase: () => Promise<void>, disk: () => Promise<DiskReport>, edition: 'self-hosted' | 'hosted'): Router {
  const router = Router();
  // Served in front of the OpenAPI validator (see app.ts), so it refuses unknown parameters itself, as every other operation does.
  router.get('/health', async (req, res) => {
    const [unknown] = Object.keys(req.query);
    if (unknown !== undefined) throw invalidInput(unknown, 'is not a known query parameter');
    let database = 'ok';
    try {
      await pingDatabase();
    } catch (error) {
      database = `error: ${(error as { original?: { code?: string } }).original?.code ?? (error as Error).message}`;
    }
    const storage = await disk();
    const healthy = database === 'ok' && storage.ok;
    res.status(healthy ? 200 : 503).json({
      status: healthy ? 'healthy' : 'unhealthy',
      service: 'greenlight',
      version: packageVersion,
      edition,
      database,
      storage: storage.detail,
      storage_free_bytes: storage.freeBytes,
    });
  });
  return router;
}
