import { createHash, randomUUID } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { Readable } from 'node:stream';
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
    const measured = { size: 0, sha256: '' };
    // Opened before the copy starts: a write stream opening the file itself could create it
    // after a failed copy had already removed it, leaving it behind.
    const file = await fs.promises.open(tempPath, 'wx');
    try {
      await pipeline(source, measuring(maxBytes, measured), file.createWriteStream());
    } catch (error) {
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

  /**
   * Files in the review directories that no attachment row names: an upload moved into place
   * whose transaction never committed because the process was killed in between. Nothing
   * refers to them; they only hold disk. `isKept` says whether a storage key has a row.
   */
  async sweepUnreferenced(isKept: (storageKey: string) => boolean): Promise<number> {
    const reviewDirs = await fs.promises.readdir(this.root, { withFileTypes: true }).catch(() => [] as fs.Dirent[]);
    let removed = 0;
    for (const dir of reviewDirs) {
      if (!dir.isDirectory() || !/^\d+$/.test(dir.name)) continue;
      for (const name of await fs.promises.readdir(path.join(this.root, dir.name))) {
        const storageKey = path.posix.join(dir.name, name);
        if (isKept(storageKey)) continue;
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
