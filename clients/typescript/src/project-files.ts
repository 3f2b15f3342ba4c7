import { constants, promises as fs } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import path from 'node:path';
import type { AttachmentInput } from './client.js';

/** What a hook attaches of the files a tool call names, and what it leaves out and why. */
export interface ProjectFiles {
  attachments: AttachmentInput[];
  /** Paths attached, relative to the project. */
  attached: string[];
  /** Paths named but not attached, with the reason. */
  skipped: Array<{ path: string; reason: string }>;
}

export interface ProjectFileRules {
  /** The project's directory: nothing outside it is read, whatever a path or a symbolic link says. */
  projectDir: string;
  /** Where relative paths start (the agent's working directory). */
  cwd: string;
  /** Larger files are not attached. */
  maxBytes: number;
}

/** Types a reviewer's browser shows in place, by extension; other text is sent as text/plain. */
const TYPES: Record<string, string> = {
  '.png': 'image/png',
  '.jpg': 'image/jpeg',
  '.jpeg': 'image/jpeg',
  '.gif': 'image/gif',
  '.webp': 'image/webp',
  '.pdf': 'application/pdf',
  '.csv': 'text/csv',
  '.md': 'text/markdown',
  '.json': 'application/json',
};

/** Text, as far as the first 8 KiB tell: UTF-8 without NUL bytes. */
function looksLikeText(data: Uint8Array): boolean {
  const head = data.subarray(0, 8192);
  if (head.includes(0)) return false;
  try {
    new TextDecoder('utf-8', { fatal: true }).decode(head.length < data.length ? head.subarray(0, lastCharacterStart(head)) : head);
    return true;
  } catch {
    return false;
  }
}

/** Where the last (possibly cut) UTF-8 character of `bytes` starts, so a cut one is not taken for invalid text. */
function lastCharacterStart(bytes: Uint8Array): number {
  let index = bytes.length - 1;
  while (index > 0 && (bytes[index] & 0xc0) === 0x80) index -= 1;
  return index;
}

function contentTypeOf(name: string, data: Uint8Array): string {
  return TYPES[path.extname(name).toLowerCase()] ?? (looksLikeText(data) ? 'text/plain' : 'application/octet-stream');
}

function unreadable(error: unknown): { reason: string } {
  return { reason: `cannot be read (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})` };
}

function inside(directory: string, file: string): boolean {
  const relative = path.relative(directory, file);
  return relative !== '' && !relative.startsWith('..') && !path.isAbsolute(relative);
}

/**
 * Reads one file for a reviewer, or says why not: only a regular file inside the project once
 * every symbolic link on its way is followed (so no link leads out of it), opened without
 * following a link that appeared since, and no larger than the limit.
 */
async function readProjectFile(named: string, rules: ProjectFileRules, realProject: string): Promise<{ data: Uint8Array; real: string } | { reason: string }> {
  let real: string;
  try {
    real = await fs.realpath(path.resolve(rules.cwd, named));
  } catch {
    return { reason: 'does not exist' };
  }
  if (!inside(realProject, real)) return { reason: 'outside the project' };
  let handle: FileHandle;
  try {
    // O_NONBLOCK: a FIFO put in the file's place must not hold the hook until it times out.
    handle = await fs.open(real, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch (error) {
    return unreadable(error);
  }
  try {
    const stats = await handle.stat();
    if (!stats.isFile()) return { reason: 'not a regular file' };
    if (stats.size > rules.maxBytes) return { reason: `larger than ${rules.maxBytes} bytes` };
    // One byte more than allowed: a file that grew since it was measured is caught too.
    const buffer = Buffer.alloc(rules.maxBytes + 1);
    let length = 0;
    while (length < buffer.length) {
      const { bytesRead } = await handle.read(buffer, length, buffer.length - length, length);
      if (bytesRead === 0) break;
      length += bytesRead;
    }
    if (length > rules.maxBytes) return { reason: `larger than ${rules.maxBytes} bytes` };
    return { data: new Uint8Array(buffer.subarray(0, length)), real };
  } finally {
    await handle.close();
  }
}

/** The files at `paths` (each once) that may be shown to a reviewer, read by the rules above. */
export async function projectFiles(paths: readonly string[], rules: ProjectFileRules): Promise<ProjectFiles> {
  const found: ProjectFiles = { attachments: [], attached: [], skipped: [] };
  let realProject: string;
  try {
    realProject = await fs.realpath(rules.projectDir);
  } catch {
    found.skipped.push(...paths.map((named) => ({ path: named, reason: 'the project directory does not exist' })));
    return found;
  }
  const seen = new Set<string>();
  for (const named of paths) {
    // Whatever the disk does, the hook still answers: a file it cannot read is left out, with why.
    const read = await readProjectFile(named, rules, realProject).catch(unreadable);
    if ('reason' in read) {
      found.skipped.push({ path: named, reason: read.reason });
      continue;
    }
    if (seen.has(read.real)) continue;
    seen.add(read.real);
    const name = path.basename(read.real);
    found.attachments.push({ name, contentType: contentTypeOf(name, read.data), data: read.data });
    found.attached.push(path.relative(realProject, read.real));
  }
  return found;
}
