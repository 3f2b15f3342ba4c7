import { createHash, randomUUID } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { type DiskSpace, isOutOfSpace } from '../system/disk-space';
import type { BlobStore, IncomingFile } from '../domain/reviews/ports';

export type { IncomingFile } from '../domain/reviews/ports';

export class FileTooLargeError extends Error {
  constructor(readonly maxBytes: number) {
    super(`the file is larger than ${maxBytes} bytes`);
    this.name = 'FileTooLargeError';
  }
}

/**
 * Counts and hashes bytes on their way to disk, failing as soon as the limit is passed. A
 * pipeline step that iterates its source rather than a Transform it pipes into: `pipe()` waits
 * forever for the `end` of a source destroyed after its end was pushed but before it was read
 * to the end (a refused upload's part), where iteration reads what was pushed or reports a
 * premature close.
 */
function measuring(maxBytes: number, measured: { size: number; sha256: string }) {
  return async function* (chunks: AsyncIterable<Buffer>): AsyncGenerator<Buffer> {
    const hash = createHash('sha256');
    for await (const chunk of chunks) {
      measured.size += chunk.length;
      if (measured.size > maxBytes) throw new FileTooLargeError(maxBytes);
      hash.update(chunk);
      yield chunk;
    }
    measured.sha256 = hash.digest('hex');
  };
}

/**
 * Flushes a directory's entries to disk. Windows cannot open a directory to flush it, and NTFS
 * journals its metadata itself.
 */
async function syncDirectory(dir: string): Promise<void> {
  if (process.platform === 'win32') return;
  const handle = await fs.promises.open(dir, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

async function writtenBefore(file: string, time: number): Promise<boolean> {
  if (time === Number.POSITIVE_INFINITY) return true;
  const stats = await fs.promises.stat(file).catch(() => null);
  return stats !== null && stats.mtimeMs < time;
}

/**
 * The bytes of attachments, under `<data_dir>/attachments/<review id>/<random name>`. Names on
 * disk never come from the uploader. Uploads stream to `.incoming/` first and are moved into
 * place only when they are complete and accepted, so a crash never leaves a partial file
 * where a row could point at it.
 */
export class AttachmentFiles implements BlobStore {
  private readonly root: string;
  private readonly incomingDir: string;

  constructor(
    root: string,
    /** Told when the disk has no room for an upload. */
    private readonly diskSpace?: Pick<DiskSpace, 'outOfSpace'>,
  ) {
    this.root = path.resolve(root);
    this.incomingDir = path.join(this.root, '.incoming');
  }

  /** Streams `source` to a temporary file; rejects with FileTooLargeError past `maxBytes`. */
  async receive(source: Readable, maxBytes: number): Promise<IncomingFile> {
    const created = await fs.promises.mkdir(this.incomingDir, { recursive: true });
    // The first upload creates the attachments directory itself, which kept files will be under.
    if (created === this.root) await syncDirectory(path.dirname(this.root));
    const tempPath = path.join(this.incomingDir, `${randomUUID()}.part`);
    const measured = { size: 0, sha256: '' };
    // Opened before the copy starts: a write stream opening the file itself could create it
    // after a failed copy had already removed it, leaving it behind.
    const file = await fs.promises.open(tempPath, 'wx');
    try {
      // `flush`: synced to disk before the stream closes the file, so before a row can point at
      // the bytes; after a power loss, no row outlives them.
      await pipeline(source, measuring(maxBytes, measured), file.createWriteStream({ flush: true }));
    } catch (error) {
      if (isOutOfSpace(error)) this.diskSpace?.outOfSpace();
      await file.close().catch(() => undefined);
      await this.discard(tempPath);
      throw error;
    }
    return { tempPath, ...measured };
  }

  /** Moves an incoming file into the review's directory; returns its storage key. */
  async keep(incoming: IncomingFile, reviewId: number): Promise<string> {
    const storageKey = path.posix.join(String(reviewId), randomUUID());
    const target = this.pathOf(storageKey);
    const reviewDir = path.dirname(target);
    const created = await fs.promises.mkdir(reviewDir, { recursive: true });
    await fs.promises.rename(incoming.tempPath, target);
    // A rename is durable only once its directory is: the row that names the file commits next.
    await syncDirectory(reviewDir);
    if (created !== undefined) await syncDirectory(this.root);
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
  /**
   * Uploads that were in flight when the process stopped. `olderThan` (a time) spares the files
   * of uploads another process sharing this directory has under way.
   */
  async sweepIncoming(olderThan = Number.POSITIVE_INFINITY): Promise<number> {
    const names = await fs.promises.readdir(this.incomingDir).catch(() => [] as string[]);
    let removed = 0;
    for (const name of names) {
      const file = path.join(this.incomingDir, name);
      if (!(await writtenBefore(file, olderThan))) continue;
      await fs.promises.rm(file, { force: true });
      removed += 1;
    }
    return removed;
  }

  /**
   * Files in the review directories that no attachment row names: an upload moved into place
   * whose transaction never committed because the process was killed in between. Nothing
   * refers to them; they only hold disk. `isKept` says whether a storage key has a row;
   * `olderThan` (a time) spares a file another process has just moved into place.
   */
  async sweepUnreferenced(isKept: (storageKey: string) => boolean, olderThan = Number.POSITIVE_INFINITY): Promise<number> {
    const reviewDirs = await fs.promises.readdir(this.root, { withFileTypes: true }).catch(() => [] as fs.Dirent[]);
    let removed = 0;
    for (const dir of reviewDirs) {
      if (!dir.isDirectory() || !/^\d+$/.test(dir.name)) continue;
      for (const name of await fs.promises.readdir(path.join(this.root, dir.name))) {
        const storageKey = path.posix.join(dir.name, name);
        if (isKept(storageKey) || !(await writtenBefore(this.pathOf(storageKey), olderThan))) continue;
        await this.remove(storageKey);
        removed += 1;
      }
    }
    return removed;
  }

  private pathOf(storageKey: string): string {
    const resolved = path.resolve(this.root, storageKey);
    // Storage keys are ours, but a tampered row must still not reach outside the directory.
    if (!resolved.startsWith(this.root + path.sep)) throw new Error(`storage key outside the attachments directory: ${storageKey}`);
    return resolved;
  }
}
