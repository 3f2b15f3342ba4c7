import { create as contentDisposition } from 'content-disposition';
import { Router, type Request, type Response } from 'express';
import { pathInteger } from '../params';
import { type AttachmentService, dispositionFor, normalizeContentType } from '../../domain/reviews/attachments';
import type { AttachmentFiles } from '../../storage/attachment-files';
import { principalOf } from '../auth';
import { MULTIPART_OVERHEAD_BYTES, receiveUpload, refuseAnnouncedOver } from '../multipart';

const MAX_DESCRIPTION_LENGTH = 1_000;

/** Refuses, before reading it, a body that announces itself as too large. */
function refuseOversizedBody(req: Request, maxBytes: number): void {
  refuseAnnouncedOver(req, maxBytes + MULTIPART_OVERHEAD_BYTES + MAX_DESCRIPTION_LENGTH * 4, `the upload is larger than max_attachment_bytes (${maxBytes} bytes)`);
}

function sendContent(res: Response, content: Awaited<ReturnType<AttachmentService['content']>>): void {
  const { attachment, stream } = content;
  const disposition = dispositionFor(attachment.content_type);
  res.set({
    'Content-Type': attachment.content_type,
    'Content-Length': String(attachment.size_bytes),
    'Content-Disposition': contentDisposition(attachment.file_name, { type: disposition }),
    'X-Content-Type-Options': 'nosniff',
    'Cache-Control': 'private, no-cache',
    ETag: `"${attachment.sha256}"`,
  });
  // Even a file shown in place runs no script and loads nothing — but a PDF goes without a
  // policy: browsers' PDF viewers refuse to work in a sandbox (and PDF is no script host).
  if (attachment.content_type === 'application/pdf') res.removeHeader('Content-Security-Policy');
  else res.set('Content-Security-Policy', "default-src 'none'; img-src 'self'; style-src 'unsafe-inline'; sandbox");
  stream.on('error', () => res.destroy());
  stream.pipe(res);
}

export function attachmentRoutes(attachments: AttachmentService, files: AttachmentFiles): Router {
  const router = Router();

  /**
   * @openapi
   * /reviews/{review_id}/attachments:
   *   post:
   *     operationId: uploadAttachment
   *     tags: [attachments]
   *     summary: Attach a file to a review
   *     description: >-
   *       Multipart upload with the file in the part `file` and an optional text part
   *       `description`. The file streams to disk with its SHA-256 computed on the way; past
   *       `max_attachment_bytes` the upload is refused with 413 and nothing is kept. A review
   *       holds at most `max_attachments_per_review` files (409 past that). The file name is
   *       sanitised: no directories, no control characters. Hosted edition: an agent key attaches
   *       only while the review is pending (409 once it is decided: the evidence a decision was
   *       made on is fixed), and a key bound to an agent only to that agent's reviews (404 for
   *       another's).
   *     parameters: [{ $ref: '#/components/parameters/ReviewId' }]
   *     requestBody:
   *       required: true
   *       content:
   *         multipart/form-data:
   *           schema: { $ref: '#/components/schemas/AttachmentUpload' }
   *           encoding:
   *             file: { contentType: application/octet-stream }
   *     responses:
   *       '201':
   *         description: The stored attachment.
   *         content:
   *           application/json:
   *             schema: { $ref: '#/components/schemas/Attachment' }
   *       '400': { $ref: '#/components/responses/BadRequest' }
   *       '401': { $ref: '#/components/responses/Unauthorized' }
   *       '403': { $ref: '#/components/responses/Forbidden' }
   *       '404': { $ref: '#/components/responses/NotFound' }
   *       '409':
   *         description: The review already holds `max_attachments_per_review` files; or, for an agent key, it is decided.
   *         content:
   *           application/problem+json:
   *             schema: { $ref: '#/components/schemas/Problem' }
   *             example: { type: about:blank, title: Conflict, status: 409, detail: review 42 already has the maximum of 20 attachments }
   *       '413':
   *         description: The file is larger than `max_attachment_bytes`.
   *         content:
   *           application/problem+json:
   *             schema: { $ref: '#/components/schemas/Problem' }
   *             example: { type: about:blank, title: Payload Too Large, status: 413, detail: the file is larger than max_attachment_bytes (26214400 bytes) }
   *       '415': { $ref: '#/components/responses/UnsupportedMediaType' }
   *       '429': { $ref: '#/components/responses/TooManyRequests' }
   *       '507': { $ref: '#/components/responses/InsufficientStorage' }
   *   get:
   *     operationId: listAttachments
   *     tags: [attachments]
   *     summary: The attachments of a review, oldest first
   *     parameters: [{ $ref: '#/components/parameters/ReviewId' }]
   *     responses:
   *       '200':
   *         description: The review's attachments.
   *         content:
   *           application/json:
   *             schema: { $ref: '#/components/schemas/AttachmentList' }
   *       '400': { $ref: '#/components/responses/BadRequest' }
   *       '401': { $ref: '#/components/responses/Unauthorized' }
   *       '403': { $ref: '#/components/responses/Forbidden' }
   *       '404': { $ref: '#/components/responses/NotFound' }
   *       '429': { $ref: '#/components/responses/TooManyRequests' }
   */
  router.post('/reviews/:review_id/attachments', async (req, res) => {
    const reviewId = pathInteger(req, 'review_id');
    refuseOversizedBody(req, attachments.limits.maxBytes);
    const principal = principalOf(res);
    await attachments.checkCanAttach(principal, reviewId);
    const upload = await receiveUpload(req, {
      files,
      fileField: 'file',
      maxBytes: attachments.limits.maxBytes,
      textFields: { description: MAX_DESCRIPTION_LENGTH },
    });
    const description = upload.fields.description?.trim();
    const record = await attachments.add(principal, reviewId, {
      incoming: upload.incoming,
      fileName: upload.fileName,
      contentType: normalizeContentType(upload.contentType),
      description: description ? description : null,
    });
    res.status(201).location(`/attachments/${record.id}`).json(record);
  });

  router.get('/reviews/:review_id/attachments', async (req, res) => {
    res.json(await attachments.list(principalOf(res).scope, pathInteger(req, 'review_id')));
  });

  /**
   * @openapi
   * /attachments/{attachment_id}:
   *   get:
   *     operationId: getAttachment
   *     tags: [attachments]
   *     summary: One attachment's record
   *     parameters: [{ $ref: '#/components/parameters/AttachmentId' }]
   *     responses:
   *       '200':
   *         description: The attachment.
   *         content:
   *           application/json:
   *             schema: { $ref: '#/components/schemas/Attachment' }
   *       '400': { $ref: '#/components/responses/BadRequest' }
   *       '401': { $ref: '#/components/responses/Unauthorized' }
   *       '403': { $ref: '#/components/responses/Forbidden' }
   *       '404': { $ref: '#/components/responses/AttachmentNotFound' }
   *       '429': { $ref: '#/components/responses/TooManyRequests' }
   *   delete:
   *     operationId: deleteAttachment
   *     tags: [attachments]
   *     summary: Delete an attachment and its bytes
   *     description: >-
   *       Hosted edition: an agent key deletes only while the attachment's review is pending (409
   *       once it is decided: the evidence a decision was made on is fixed); an admin still may,
   *       and the audit log records it.
   *     parameters: [{ $ref: '#/components/parameters/AttachmentId' }]
   *     responses:
   *       '204': { description: Deleted; the bytes are gone from disk. }
   *       '400': { $ref: '#/components/responses/BadRequest' }
   *       '401': { $ref: '#/components/responses/Unauthorized' }
   *       '403': { $ref: '#/components/responses/Forbidden' }
   *       '404': { $ref: '#/components/responses/AttachmentNotFound' }
   *       '409':
   *         description: An agent key asked, and the attachment's review is decided.
   *         content:
   *           application/problem+json:
   *             schema: { $ref: '#/components/schemas/Problem' }
   *             example: { type: about:blank, title: Conflict, status: 409, detail: 'review 42 is decided (approved): the evidence it was decided on is fixed, and an agent key can no longer add or delete its attachments' }
   *       '415': { $ref: '#/components/responses/UnsupportedMediaType' }
   *       '429': { $ref: '#/components/responses/TooManyRequests' }
   *       '507': { $ref: '#/components/responses/InsufficientStorage' }
   */
  router.get('/attachments/:attachment_id', async (req, res) => {
    res.json(await attachments.get(principalOf(res).scope, pathInteger(req, 'attachment_id')));
  });

  router.delete('/attachments/:attachment_id', async (req, res) => {
    await attachments.remove(principalOf(res), pathInteger(req, 'attachment_id'));
    res.status(204).end();
  });

  /**
   * @openapi
   * /attachments/{attachment_id}/download:
   *   get:
   *     operationId: downloadAttachment
   *     tags: [attachments]
   *     summary: The attachment's bytes
   *     description: >-
   *       Served with its stored `Content-Type`, `Content-Length`, `X-Content-Type-Options: nosniff`
   *       and `Content-Disposition`: `inline` for plain images, PDF and text, `attachment` for
   *       anything a browser could execute (HTML, SVG, XML, JavaScript …) or does not know.
   *     parameters: [{ $ref: '#/components/parameters/AttachmentId' }]
   *     responses:
   *       '200':
   *         description: The content.
   *         headers:
   *           Content-Disposition: { schema: { type: string }, example: 'inline; filename="receipt.png"' }
   *           X-Content-Type-Options: { schema: { type: string, enum: [nosniff] } }
   *         content:
   *           application/octet-stream:
   *             schema: { type: string, format: binary }
   *       '400': { $ref: '#/components/responses/BadRequest' }
   *       '401': { $ref: '#/components/responses/Unauthorized' }
   *       '403': { $ref: '#/components/responses/Forbidden' }
   *       '404': { $ref: '#/components/responses/AttachmentNotFound' }
   *       '410':
   *         description: The record exists but its bytes are gone from the server's disk (removed outside Greenlight).
   *         content:
   *           application/problem+json:
   *             schema: { $ref: '#/components/schemas/Problem' }
   *       '429': { $ref: '#/components/responses/TooManyRequests' }
   */
  router.get('/attachments/:attachment_id/download', async (req, res) => {
    sendContent(res, await attachments.content(principalOf(res).scope, pathInteger(req, 'attachment_id')));
  });

  return router;
}
