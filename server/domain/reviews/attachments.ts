import type { Readable } from 'node:stream';
import { AppError, notFound, refuseNul } from '../shared/errors';
import { domainEvent } from '../shared/events';
import { refuseHiddenCharacters } from '../shared/text';
import type { AttachmentRepository, AttachmentRules, BlobStore, IncomingFile, ReviewRepository } from './ports';
import type { Clock, UnitOfWork } from '../shared/unit-of-work';
import type { Principal, Scope } from '../shared/principal';
import type { AttachmentRecord, ReviewStatus } from './records';

export interface AttachmentLimits {
  maxBytes: number;
  maxPerReview: number;
}

export interface Upload {
  incoming: IncomingFile;
  /** As the client sent it; stored as `sanitizeFileName` makes it. */
  fileName: string | undefined;
  contentType: string;
  description: string | null;
}

export interface AttachmentContent {
  attachment: AttachmentRecord;
  stream: Readable;
}

export interface AttachmentServiceOptions {
  attachments: AttachmentRepository;
  reviews: Pick<ReviewRepository, 'exists' | 'findById'>;
  files: BlobStore;
  unitOfWork: UnitOfWork;
  limits: AttachmentLimits;
  /** Refuse (400) a file name or description holding a hidden character (`refuse_hidden_characters`). */
  refuseHiddenCharacters?: boolean;
  clock?: Clock;
}

/** Files attached to reviews: rows in the database, bytes in the blob store. */
export class AttachmentService {
  readonly limits: AttachmentLimits;
  private readonly clock: Clock;

  constructor(private readonly options: AttachmentServiceOptions) {
    this.limits = options.limits;
    this.clock = options.clock ?? Date.now;
  }

  /** Refuses early, before any byte is read, when the upload could not be accepted anyway. */
  async checkCanAttach(principal: Principal, reviewId: number): Promise<void> {
    const { scope } = principal;
    const review = await this.options.reviews.findById(scope, reviewId);
    if (!review) throw notFound('review', reviewId);
    if (rulesFor(principal).pendingOnly && review.status !== 'pending') throw evidenceFixed(reviewId, review.status);
    if ((await this.options.attachments.countFor(scope, reviewId)) >= this.limits.maxPerReview) throw this.limitReached(reviewId);
  }

  async add(principal: Principal, reviewId: number, upload: Upload): Promise<AttachmentRecord> {
    const { files, attachments, unitOfWork } = this.options;
    const attachment = {
      file_name: sanitizeFileName(upload.fileName),
      content_type: upload.contentType,
      size_bytes: upload.incoming.size,
      sha256: upload.incoming.sha256,
      description: upload.description,
    };
    let placedKey: string | undefined;
    const place = async (): Promise<string> => (placedKey = await files.keep(upload.incoming, reviewId));
    let result;
    try {
      refuseNul({ description: upload.description });
      // The name as sent: sanitizing drops some hidden characters, not the intent behind them.
      if (this.options.refuseHiddenCharacters) refuseHiddenCharacters({ filename: upload.fileName ?? '', description: upload.description });
      result = await unitOfWork.run(async (tx) => {
        const rules = { ...rulesFor(principal), maxPerReview: this.limits.maxPerReview };
        const inserted = await attachments.insert(tx, principal.scope, reviewId, attachment, rules, this.clock(), place);
        if (inserted.outcome === 'inserted') tx.record(domainEvent('attachment.created', inserted.review, inserted.attachment));
        return inserted;
      });
    } catch (error) {
      // The transaction rolled back: bytes moved into place must not outlive it.
      if (placedKey) await files.remove(placedKey);
      throw error;
    } finally {
      await files.discard(upload.incoming.tempPath);
    }
    if (result.outcome === 'review_not_found') throw notFound('review', reviewId);
    if (result.outcome === 'limit_reached') throw this.limitReached(reviewId);
    if (result.outcome === 'review_decided') throw evidenceFixed(result.review_id, result.status);
    return result.attachment;
  }

  async list(scope: Scope, reviewId: number): Promise<{ review_id: number; attachments: AttachmentRecord[]; count: number }> {
    if (!(await this.options.reviews.exists(scope, reviewId))) throw notFound('review', reviewId);
    const attachments = await this.options.attachments.listFor(scope, reviewId);
    return { review_id: reviewId, attachments, count: attachments.length };
  }

  async get(scope: Scope, id: number): Promise<AttachmentRecord> {
    const stored = await this.options.attachments.findById(scope, id);
    if (!stored) throw notFound('attachment', id);
    return stored.attachment;
  }

  async content(scope: Scope, id: number): Promise<AttachmentContent> {
    const stored = await this.options.attachments.findById(scope, id);
    if (!stored) throw notFound('attachment', id);
    if (!(await this.options.files.exists(stored.storageKey))) {
      throw new AppError(410, `the content of attachment ${id} is gone from the server's disk (removed outside Greenlight); its record remains — delete it, or attach the file again`);
    }
    return { attachment: stored.attachment, stream: this.options.files.open(stored.storageKey) };
  }

  async remove(principal: Principal, id: number): Promise<void> {
    const removed = await this.options.unitOfWork.run(async (tx) => {
      const deletion = await this.options.attachments.delete(tx, principal.scope, id, rulesFor(principal));
      if (deletion.outcome === 'deleted') {
        const { attachment } = deletion.stored;
        tx.record(domainEvent('attachment.deleted', deletion.review, { id: attachment.id, review_id: attachment.review_id }));
      }
      return deletion;
    });
    if (removed.outcome === 'not_found') throw notFound('attachment', id);
    if (removed.outcome === 'review_decided') throw evidenceFixed(removed.review_id, removed.status);
    await this.options.files.remove(removed.stored.storageKey);
  }

  private limitReached(reviewId: number): AppError {
    return new AppError(409, `review ${reviewId} already has the maximum of ${this.limits.maxPerReview} attachments`);
  }
}

/**
 * An agent key changes a review's evidence only while the review waits for its decision: what a
 * person decided on stays what the review shows. People and admin keys keep their say over a
 * decided review's files (an admin removes a file that should never have been uploaded), and
 * the audit log records what they do.
 */
function rulesFor(principal: Principal): AttachmentRules {
  return { pendingOnly: principal.kind === 'api_key' && principal.access === 'agent' };
}

function evidenceFixed(reviewId: number, status: ReviewStatus): AppError {
  return new AppError(409, `review ${reviewId} is decided (${status}): the evidence it was decided on is fixed, and an agent key can no longer add or delete its attachments`);
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
