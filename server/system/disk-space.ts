import fs from 'node:fs';
import { errorCodes } from './system-errors';

/** What a write that found the disk (or the user's quota) full fails with: the system's, or SQLite's. */
const OUT_OF_SPACE = new Set(['ENOSPC', 'EDQUOT', 'SQLITE_FULL']);

/** Whether `error` (or the driver error Sequelize wraps in it) says there was no room left on disk. */
export function isOutOfSpace(error: unknown): boolean {
  return errorCodes(error).some((code) => OUT_OF_SPACE.has(code));
}

export interface DiskReport {
  /** False from a write that found no room until the next write that succeeds. */
  ok: boolean;
  /** `ok`, or since when writes have been failing. */
  detail: string;
  /** Free bytes under `dir` for this process, where the system says. */
  freeBytes: number | null;
}

/**
 * Whether the disk under `data_dir` has room for writes, as the writes themselves found: a full
 * disk makes them fail (and the API answer 507) while reads go on, and once space is freed the
 * next write succeeds with no restart. `/health` and `greenlight status` report it.
 */
export class DiskSpace {
  private fullSince: number | null = null;

  constructor(
    readonly dir: string,
    private readonly clock: () => number = Date.now,
  ) {}

  /** A write failed for want of space. */
  outOfSpace(): void {
    this.fullSince ??= this.clock();
  }

  /** A write succeeded: there is room again. */
  written(): void {
    this.fullSince = null;
  }

  async report(): Promise<DiskReport> {
    const freeBytes = await freeBytesUnder(this.dir);
    if (this.fullSince === null) return { ok: true, detail: 'ok', freeBytes };
    const since = new Date(this.fullSince).toISOString();
    return { ok: false, detail: `full: writes have failed for want of space since ${since}; free space under ${this.dir}`, freeBytes };
  }
}

export async function freeBytesUnder(dir: string): Promise<number | null> {
  try {
    const stats = await fs.promises.statfs(dir);
    return stats.bavail * stats.bsize;
  } catch {
    return null;
  }
}
