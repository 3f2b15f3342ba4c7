import { Readable } from 'node:stream';
import { AppError, notFound, refuseNul } from '../shared/errors';
import { domainEvent } from '../shared/events';
import { refuseHiddenCharacters } from '../shared/text';
import type { AttachmentRepository, AttachmentRules, BlobStore, IncomingFile, ReviewRepository } from './ports';
import type { Clock, Tx, UnitOfWork } from '../shared/unit-of-work';
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

/** A file handed over whole, not streamed (an MCP call carries its files base64 in the JSON). */
export interface WholeFile {
  name: string;
  contentType: string | undefined;
  data: Uint8Array;
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
    const { files, unitOfWork } = this.options;
    const placed: string[] = [];
    let result;
    try {
      this.checkUpload(upload);
      result = await unitOfWork.run((tx) => this.insert(tx, principal.scope, reviewId, upload, rulesFor(principal), placed), { by: principal });
    } catch (error) {
      // The transaction rolled back: bytes moved into place must not outlive it.
      await this.removePlaced(placed);
      throw error;
    } finally {
      await files.discard(upload.incoming.tempPath);
    }
    if (result.outcome === 'review_not_found') throw notFound('review', reviewId);
    if (result.outcome === 'limit_reached') throw this.limitReached(reviewId);
    if (result.outcome === 'review_decided') throw evidenceFixed(result.review_id, result.status);
    return result.attachment;
  }

  /**
   * Refuses, before anything is stored, files a new review could not take: more than
   * `max_attachments_per_review` (413: the request is larger than the server takes), or a
   * name or description the text rules refuse.
   */
  checkUploads(uploads: readonly Upload[]): void {
    if (uploads.length > this.limits.maxPerReview) throw this.tooManyFiles(uploads.length);
    for (const upload of uploads) this.checkUpload(upload);
  }

  tooManyFiles(count?: number): AppError {
    const sent = count === undefined ? 'more' : String(count);
    return new AppError(413, `a review holds at most ${this.limits.maxPerReview} attachments (max_attachments_per_review); this request has ${sent}`);
  }

  /**
   * Stores `uploads` as the attachments of a review being created in `tx`: they are part of
   * the request the review is decided on, so they are kept even when a routing rule decides it
   * at once. Each file moved into place is listed in `placed`, for `removePlaced` should the
   * transaction roll back.
   */
  async attachWithin(tx: Tx, scope: Scope, reviewId: number, uploads: readonly Upload[], placed: string[]): Promise<AttachmentRecord[]> {
    const records: AttachmentRecord[] = [];
    for (const upload of uploads) {
      const result = await this.insert(tx, scope, reviewId, upload, { pendingOnly: false }, placed);
      // Checked before the transaction began, and nothing else can see the review yet.
      if (result.outcome !== 'inserted') throw new Error(`an attachment of the new review ${reviewId} was not stored: ${result.outcome}`);
      records.push(result.attachment);
    }
    return records;
  }

  /**
   * Writes files handed over whole to holding files, as uploads for `SubmitOptions.uploads`:
   * refused (413, naming the file) past `max_attachment_bytes`, or past
   * `max_attachments_per_review` files. On a refusal none is kept.
   */
  async hold(wholeFiles: readonly WholeFile[]): Promise<Upload[]> {
    if (wholeFiles.length > this.limits.maxPerReview) throw this.tooManyFiles(wholeFiles.length);
    const uploads: Upload[] = [];
    try {
      for (const [index, file] of wholeFiles.entries()) {
        if (file.data.byteLength > this.limits.maxBytes) {
          throw new AppError(413, `attachments[${index}] (${file.name}) is ${file.data.byteLength} bytes, larger than max_attachment_bytes (${this.limits.maxBytes} bytes)`);
        }
        const incoming = await this.options.files.receive(Readable.from([Buffer.from(file.data)]), this.limits.maxBytes);
        uploads.push({ incoming, fileName: file.name, contentType: normalizeContentType(file.contentType), description: null });
      }
    } catch (error) {
      await this.discard(uploads);
      throw error;
    }
    return uploads;
  }

  /** Removes bytes moved into place by a transaction that then rolled back. */
  async removePlaced(placed: readonly string[]): Promise<void> {
    for (const key of placed) await this.options.files.remove(key);
  }

  /** Removes the holding files of uploads (those moved into place are gone from there already). */
  async discard(uploads: readonly Upload[]): Promise<void> {
    for (const upload of uploads) await this.options.files.discard(upload.incoming.tempPath);
  }

  private checkUpload(upload: Upload): void {
    refuseNul({ description: upload.description });
    // The name as sent: sanitizing drops some hidden characters, not the intent behind them.
    if (this.options.refuseHiddenCharacters) refuseHiddenCharacters({ filename: upload.fileName ?? '', description: upload.description });
  }

  private async insert(tx: Tx, scope: Scope, reviewId: number, upload: Upload, rules: AttachmentRules, placed: string[]) {
    const { files, attachments } = this.options;
    const attachment = {
      file_name: sanitizeFileName(upload.fileName),
      content_type: upload.contentType,
      size_bytes: upload.incoming.size,
      sha256: upload.incoming.sha256,
      description: upload.description,
    };
    const place = async (): Promise<string> => {
      const key = await files.keep(upload.incoming, reviewId);
      placed.push(key);
      return key;
    };
    const inserted = await attachments.insert(tx, scope, reviewId, attachment, { ...rules, maxPerReview: this.limits.maxPerReview }, this.clock(), place);
    if (inserted.outcome === 'inserted') tx.record(domainEvent('attachment.created', inserted.review, inserted.attachment));
    return inserted;
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
    }, { by: principal });
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
