import { Router } from 'express';
import { invalidInput } from '../../domain/shared/errors';
import type { ReceiptKeys } from '../../receipts/keys';

/**
 * How long a verifier may keep the key set. A rotation's new key signs at once; a verifier that
 * meets a `kid` it does not hold fetches the set again (the clients do), so this only bounds
 * how often an unchanged set is fetched.
 */
const JWKS_MAX_AGE_SECONDS = 300;

/**
 * @openapi
 * /.well-known/jwks.json:
 *   get:
 *     operationId: getReceiptKeys
 *     tags: [decisions]
 *     summary: The public keys that verify decision receipts (JWK Set)
 *     description: |
 *       Every Ed25519 public key this installation has signed receipts with, the current one first: a rotation
 *       (`greenlight keys rotate`) adds a key and keeps the earlier ones here, so receipts they signed still verify.
 *       Open without a key, and cacheable (`Cache-Control: public, max-age=300`); fetch it again on meeting an
 *       unknown `kid`.
 *     security: []
 *     responses:
 *       '200':
 *         description: The key set.
 *         content:
 *           application/json:
 *             schema: { $ref: '#/components/schemas/ReceiptKeySet' }
 *       '400': { $ref: '#/components/responses/BadRequest' }
 *       '403': { $ref: '#/components/responses/Forbidden' }
 * components:
 *   schemas:
 *     ReceiptKeySet:
 *       type: object
 *       required: [keys]
 *       properties:
 *         keys:
 *           type: array
 *           items: { $ref: '#/components/schemas/ReceiptKey' }
 *       example:
 *         keys: [{ kty: OKP, crv: Ed25519, x: 11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo, kid: NPWvkKII0PdTBLR8dFoUOLxmFE3jGozTvUcv_ZMnYFo, alg: EdDSA, use: sig }]
 *     ReceiptKey:
 *       type: object
 *       description: An Ed25519 public key as a JWK (RFC 8037); `kid` is its JWK thumbprint (RFC 7638).
 *       required: [kty, crv, x, kid, alg, use]
 *       properties:
 *         kty: { type: string, enum: [OKP] }
 *         crv: { type: string, enum: [Ed25519] }
 *         x: { type: string, description: 'The public key (base64url).' }
 *         kid: { type: string }
 *         alg: { type: string, enum: [EdDSA] }
 *         use: { type: string, enum: [sig] }
 */
export function receiptKeyRoutes(keys: Pick<ReceiptKeys, 'jwks'>): Router {
  const router = Router();
  // Served in front of the OpenAPI validator with /health: verifiers fetch it without a key.
  router.get('/.well-known/jwks.json', async (req, res) => {
    const [unknown] = Object.keys(req.query);
    if (unknown !== undefined) throw invalidInput(unknown, 'is not a known query parameter');
    res.set('Cache-Control', `public, max-age=${JWKS_MAX_AGE_SECONDS}`).json(await keys.jwks());
  });
  return router;
}
