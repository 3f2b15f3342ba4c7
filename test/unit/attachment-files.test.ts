import fs from 'node:fs';
import path from 'node:path';
import { Readable } from 'node:stream';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { AttachmentFiles } from '../../server/storage/attachment-files';
import { makeTempDir } from '../support/temp';

let root: ReturnType<typeof makeTempDir>;
let files: AttachmentFiles;

beforeEach(() => {
  root = makeTempDir('greenlight-files-');
  files = new AttachmentFiles(root.dir);
});
afterEach(() => root.remove());

function incoming(): string[] {
  const dir = path.join(root.dir, '.incoming');
  return fs.existsSync(dir) ? fs.readdirSync(dir) : [];
}

/** A source holding its whole content, already ended, more than one write's worth. */
function endedSource(bytes: number): Readable {
  const source = new Readable({ read() {} });
  for (let sent = 0; sent < bytes; sent += 16 * 1024) source.push(Buffer.alloc(16 * 1024, 1));
  source.push(null);
  return source;
}

function settlesWithin<T>(promise: Promise<T>, ms: number): Promise<T> {
  return Promise.race([
    promise,
    new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`still pending after ${ms} ms`)), ms)),
  ]);
}

describe('receiving an upload into the incoming directory', () => {
  it('writes the whole source and reports its size and SHA-256', async () => {
    const received = await files.receive(Readable.from([Buffer.from('hello '), Buffer.from('world')]), 100);
    expect(received.size).toBe(11);
    expect(received.sha256).toBe('b94d27b9934d3e08a52e52d7da7dabfac484efe37a5380ee9088f7ace2efcde9');
    expect(fs.readFileSync(received.tempPath, 'utf8')).toBe('hello world');
  });

  it('rejects past the limit and keeps nothing', async () => {
    await expect(files.receive(endedSource(64 * 1024), 1000)).rejects.toThrow(/larger than 1000 bytes/);
    expect(incoming()).toEqual([]);
  });

  it('settles, whole or not at all, when a fully sent source is destroyed before it was read to the end', async () => {
    // How a refused upload's part stream is dropped: its end was already pushed, its bytes not all read.
    const total = 4 * 1024 * 1024;
    const source = endedSource(total);
    const read = source.read.bind(source);
    let firstRead = true;
    source.read = (size?: number) => {
      if (firstRead) setImmediate(() => source.destroy());
      firstRead = false;
      return read(size);
    };
    const outcome = await settlesWithin(files.receive(source, 2 * total).catch((error: Error) => error), 2000);
    if (outcome instanceof Error) {
      expect(incoming()).toEqual([]);
    } else {
      expect(outcome.size).toBe(total);
      expect(fs.statSync(outcome.tempPath).size).toBe(total);
    }
  });
});
