import { type Request, Router } from 'express';
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
 *     ReceiptClaims:
 *       type: object
 *       description: |
 *         The payload of a decision's `receipt` (see `Decision.receipt`): what a verifier reads once the signature,
 *         `exp` and `action_sha256` have been checked.
 *       required: [iss, sub, iat, exp, jti, decision_type, decided_by, votes]
 *       properties:
 *         iss: { type: string, description: "The server's `public_url`." }
 *         sub: { type: string, description: "The review's id, as text." }
 *         organization_id: { type: integer, description: "The review's organization; absent outside one." }
 *         iat: { type: integer, description: 'When the decision was made (seconds since the epoch).' }
 *         exp: { type: integer, description: '`iat` plus `receipt_ttl_seconds`: past it, the action must not start.' }
 *         jti: { type: string, description: 'Unique per decision: an executor that keeps those it has run can refuse a replay.' }
 *         decision_type: { $ref: '#/components/schemas/DecisionType' }
 *         action_sha256:
 *           type: string
 *           pattern: '^[0-9a-f]{64}$'
 *           description: |
 *             SHA-256, lowercase hex, of the UTF-8 bytes of the action that may run, exactly as stored (no trimming,
 *             no normalisation, no re-serialised JSON): `proposed_action` when approved, `modified_action` when
 *             modified. Absent when rejected.
 *         decided_by:
 *           type: array
 *           description: 'User ids of the people whose decision or votes made it; else the name it was recorded under (`rule:<name>`, `policy:expired`, a self-hosted reviewer''s name).'
 *           items:
 *             oneOf:
 *               - { type: integer }
 *               - { type: string }
 *         votes:
 *           type: array
 *           description: "The approval workflow's votes; empty without one."
 *           items:
 *             type: object
 *             required: [user_id, stage, decision_type]
 *             properties:
 *               user_id: { type: integer }
 *               stage: { type: integer }
 *               decision_type: { $ref: '#/components/schemas/DecisionType' }
 */
/**
 * @openapi
 * /receipts/verify:
 *   post:
 *     operationId: verifyReceipt
 *     tags: [decisions]
 *     summary: Check a decision's receipt against an action, on the server that signed it
 *     description: |
 *       Whether `receipt` allows `action`: signed by one of this server's keys (current or earlier), unexpired, and
 *       naming the SHA-256 of exactly that text. Always 200: `valid` says, `reason` and `detail` say why not, `claims`
 *       (present only when it is valid) are the receipt's. The clients check receipts offline with the key set
 *       (`GET /.well-known/jwks.json`); this is for an executor that cannot verify Ed25519 itself, or wants the signing
 *       server's word. Like the offline check, it does not know whether the action already ran: keep the `jti`s.
 *     requestBody:
 *       required: true
 *       content:
 *         application/json:
 *           schema: { $ref: '#/components/schemas/ReceiptVerificationRequest' }
 *     responses:
 *       '200':
 *         description: Whether the receipt allows the action.
 *         content:
 *           application/json:
 *             schema: { $ref: '#/components/schemas/ReceiptVerification' }
 *       '400': { $ref: '#/components/responses/BadRequest' }
 *       '401': { $ref: '#/components/responses/Unauthorized' }
 *       '403': { $ref: '#/components/responses/Forbidden' }
 *       '413': { $ref: '#/components/responses/PayloadTooLarge' }
 *       '415': { $ref: '#/components/responses/UnsupportedMediaType' }
 *       '429': { $ref: '#/components/responses/TooManyRequests' }
 * components:
 *   schemas:
 *     ReceiptVerificationRequest:
 *       type: object
 *       additionalProperties: false
 *       required: [receipt, action]
 *       properties:
 *         receipt: { type: string, minLength: 1, maxLength: 16384, description: "A decision's `receipt`." }
 *         action: { type: string, maxLength: 1000000, description: 'The action about to run, as the review holds it: `proposed_action` when approved, `modified_action` when modified.' }
 *       example: { receipt: eyJhbGciOiJFZERTQSIsImtpZCI6Ik5QV3ZrS0lJMFBkVEJMUjhkRm9VT0x4bUZFM2pHb3pUdlVjdl9aTW5ZRm8iLCJ0eXAiOiJKV1QifQ.eyJzdWIiOiI0MiJ9.c2lnbmF0dXJl, action: 'Refund order 1042 partially (EUR 125.00)' }
 *     ReceiptVerification:
 *       type: object
 *       required: [valid, reason, detail]
 *       properties:
 *         valid: { type: boolean }
 *         reason:
 *           type: string
 *           nullable: true
 *           enum: [signature, expired, malformed, nothing_to_run, action_mismatch, null]
 *           description: Why the receipt does not allow the action; null when it does.
 *         detail: { type: string, nullable: true, description: The reason in a sentence; null when valid. }
 *         claims:
 *           description: "The receipt's claims; present only when it is valid."
 *           allOf: [{ $ref: '#/components/schemas/ReceiptClaims' }]
 *       example: { valid: false, reason: action_mismatch, detail: the action is not the one the decision was made on }
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

/** `POST /receipts/verify`, behind the validator and the callers' rules like every operation that needs a key. */
export function receiptVerificationRoutes(keys: Pick<ReceiptKeys, 'verify'>): Router {
  const router = Router();
  router.post('/receipts/verify', async (req: Request<unknown, unknown, { receipt: string; action: string }>, res) => {
    res.json(await keys.verify(req.body.receipt, req.body.action));
  });
  return router;
}
