import { createHash, randomUUID } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { Transform, type Readable, type TransformCallback } from 'node:stream';
import { pipeline } from 'node:stream/promises';

/** An upload written to the incoming directory, not yet attached to a review. */
export interface IncomingFile {
  tempPath: string;
  size: number;
  sha256: string;
}

export class FileTooLargeError extends Error {
  constructor(readonly maxBytes: number) {
    super(`the file is larger than ${maxBytes} bytes`);
    this.name = 'FileTooLargeError';
  }
}

/** Counts and hashes bytes on their way to disk, failing as soon as the limit is passed. */
class MeasuringStream extends Transform {
  size = 0;
  private readonly hash = createHash('sha256');

  constructor(private readonly maxBytes: number) {
    super();
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback): void {
    this.size += chunk.length;
    if (this.size > this.maxBytes) return callback(new FileTooLargeError(this.maxBytes));
    this.hash.update(chunk);
    callback(null, chunk);
  }

  digest(): string {
    return this.hash.digest('hex');
  }
}

/**
 * The bytes of attachments, under `<data_dir>/attachments/<review id>/<random name>`. Names on
 * disk never come from the uploader. Uploads stream to `.incoming/` first and are moved into
 * place only when they are complete and accepted, so a crash never leaves a partial file
 * where a row could point at it.
 */
export class AttachmentFiles {
  private readonly root: string;
  private readonly incomingDir: string;

  constructor(root: string) {
    this.root = path.resolve(root);
    this.incomingDir = path.join(this.root, '.incoming');
  }

  /** Streams `source` to a temporary file; rejects with FileTooLargeError past `maxBytes`. */
  async receive(source: Readable, maxBytes: number): Promise<IncomingFile> {
    await fs.promises.mkdir(this.incomingDir, { recursive: true });
    const tempPath = path.join(this.incomingDir, `${randomUUID()}.part`);
    const measuring = new MeasuringStream(maxBytes);
    try {
      await pipeline(source, measuring, fs.createWriteStream(tempPath, { flags: 'wx' }));
    } catch (error) {
      await this.discard(tempPath);
      throw error;
    }
    return { tempPath, size: measuring.size, sha256: measuring.digest() };
  }

  /** Moves an incoming file into the review's directory; returns its storage key. */
  async keep(incoming: IncomingFile, reviewId: number): Promise<string> {
    const storageKey = path.posix.join(String(reviewId), randomUUID());
    const target = this.pathOf(storageKey);
    await fs.promises.mkdir(path.dirname(target), { recursive: true });
    await fs.promises.rename(incoming.tempPath, target);
    return storageKey;
  }

  async discard(tempPath: string): Promise<void> {
    await fs.promises.rm(tempPath, { force: true });
  }

  open(storageKey: string): fs.ReadStream {
    return fs.createReadStream(this.pathOf(storageKey));
  }

  async remove(storageKey: string): Promise<void> {
    await fs.promises.rm(this.pathOf(storageKey), { force: true });
  }

  async exists(storageKey: string): Promise<boolean> {
    return fs.promises.access(this.pathOf(storageKey)).then(
      () => true,
      () => false,
    );
  }

  /** Uploads that were in flight when the process stopped. */
  async sweepIncoming(): Promise<number> {
    const names = await fs.promises.readdir(this.incomingDir).catch(() => [] as string[]);
    await Promise.all(names.map((name) => fs.promises.rm(path.join(this.incomingDir, name), { force: true })));
    return names.length;
  }

  private pathOf(storageKey: string): string {
    const resolved = path.resolve(this.root, storageKey);
    // Storage keys are ours, but a tampered row must still not reach outside the directory.
    if (!resolved.startsWith(this.root + path.sep)) throw new Error(`storage key outside the attachments directory: ${storageKey}`);
    return resolved;
  }
}
