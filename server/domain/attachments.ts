import type { Readable } from 'node:stream';
import type { AttachmentFiles, IncomingFile } from '../db/attachment-files';
import { type AttachmentStore, toAttachmentRecord } from '../db/attachment-store';
import { AppError, notFound } from './errors';
import type { EventBus } from './events';
import type { AttachmentRecord } from './records';

export interface AttachmentLimits {
  maxBytes: number;
  maxPerReview: number;
}

export interface Upload {
  incoming: IncomingFile;
  fileName: string;
  contentType: string;
  description: string | null;
}

export interface AttachmentContent {
  attachment: AttachmentRecord;
  stream: Readable;
}

/** Files attached to reviews: rows in the database, bytes under `data_dir`. */
export class AttachmentService {
  constructor(
    private readonly store: AttachmentStore,
    readonly files: AttachmentFiles,
    private readonly bus: EventBus,
    readonly limits: AttachmentLimits,
    private readonly reviewExists: (id: number) => Promise<boolean>,
    private readonly clock: () => number = Date.now,
  ) {}

  /** Refuses early, before any byte is read, when the upload could not be accepted anyway. */
  async checkCanAttach(reviewId: number): Promise<void> {
    if (!(await this.reviewExists(reviewId))) throw notFound('review', reviewId);
    if ((await this.store.countFor(reviewId)) >= this.limits.maxPerReview) throw this.limitReached(reviewId);
  }

  async add(reviewId: number, upload: Upload): Promise<AttachmentRecord> {
    const attachment = {
      file_name: upload.fileName,
      content_type: upload.contentType,
      size_bytes: upload.incoming.size,
      sha256: upload.incoming.sha256,
      description: upload.description,
    };
    let placedKey: string | undefined;
    const place = async (): Promise<string> => (placedKey = await this.files.keep(upload.incoming, reviewId));
    let result;
    try {
      result = await this.store.insert(reviewId, attachment, this.limits.maxPerReview, this.clock(), place);
    } catch (error) {
      // The transaction rolled back: bytes moved into place must not outlive it.
      if (placedKey) await this.files.remove(placedKey);
      throw error;
    } finally {
      await this.files.discard(upload.incoming.tempPath);
    }
    if (result.outcome === 'review_not_found') throw notFound('review', reviewId);
    if (result.outcome === 'limit_reached') throw this.limitReached(reviewId);
    const record = toAttachmentRecord(result.row);
    this.bus.emit('attachment.created', record);
    return record;
  }

  async list(reviewId: number): Promise<{ review_id: number; attachments: AttachmentRecord[]; count: number }> {
    if (!(await this.reviewExists(reviewId))) throw notFound('review', reviewId);
    const attachments = await this.store.listFor(reviewId);
    return { review_id: reviewId, attachments, count: attachments.length };
  }

  async get(id: number): Promise<AttachmentRecord> {
    const row = await this.store.findById(id);
    if (!row) throw notFound('attachment', id);
    return toAttachmentRecord(row);
  }

  async content(id: number): Promise<AttachmentContent> {
    const row = await this.store.findById(id);
    if (!row) throw notFound('attachment', id);
    if (!(await this.files.exists(row.storage_key))) {
      throw new AppError(500, `the content of attachment ${id} is missing on the server`);
    }
    return { attachment: toAttachmentRecord(row), stream: this.files.open(row.storage_key) };
  }

  async remove(id: number): Promise<void> {
    const row = await this.store.delete(id);
    if (!row) throw notFound('attachment', id);
    await this.files.remove(row.storage_key);
    this.bus.emit('attachment.deleted', { id: row.id, review_id: row.review_id });
  }

  private limitReached(reviewId: number): AppError {
    return new AppError(409, `review ${reviewId} already has the maximum of ${this.limits.maxPerReview} attachments`);
  }
}

const MAX_FILE_NAME_BYTES = 255;

/**
 * The name shown and offered on download: the last path segment only, without control or
 * bidirectional-override characters or leading dots, at most 255 bytes, never empty.
 */
export function sanitizeFileName(raw: string | undefined): string {
  const lastSegment = (raw ?? '').split(/[\\/]/).pop() ?? '';
  let name = lastSegment
    .normalize('NFC')
    .replace(/[\u0000-\u001f\u007f-\u009f\u200e\u200f\u202a-\u202e\u2066-\u2069]/g, '')
    .trim()
    .replace(/^\.+/, '');
  while (Buffer.byteLength(name) > MAX_FILE_NAME_BYTES) {
    const dot = name.lastIndexOf('.');
    const extension = dot > 0 && name.length - dot <= 16 ? name.slice(dot) : '';
    name = name.slice(0, name.length - extension.length - 1) + extension;
  }
  return name === '' ? 'file' : name;
}

const CONTENT_TYPE = /^[a-z0-9][a-z0-9!#$&^_.+-]{0,126}\/[a-z0-9][a-z0-9!#$&^_.+-]{0,126}$/;

/** The declared type without parameters, or `application/octet-stream` when it is not one. */
export function normalizeContentType(raw: string | undefined): string {
  const type = (raw ?? '').split(';')[0].trim().toLowerCase();
  return CONTENT_TYPE.test(type) ? type : 'application/octet-stream';
}

/** Types a browser may show in place: they cannot run script. Everything else downloads. */
const SHOWN_INLINE = new Set([
  'image/png',
  'image/jpeg',
  'image/gif',
  'image/webp',
  'image/avif',
  'image/bmp',
  'application/pdf',
  'text/plain',
  'text/csv',
  'text/markdown',
]);

export function dispositionFor(contentType: string): 'inline' | 'attachment' {
  return SHOWN_INLINE.has(contentType) ? 'inline' : 'attachment';
}
