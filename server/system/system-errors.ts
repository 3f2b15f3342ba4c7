/** The codes `error` carries: its own, and that of the driver error Sequelize wraps in it. */
export function errorCodes(error: unknown): string[] {
  return [error, (error as { original?: unknown })?.original, (error as { parent?: unknown })?.parent]
    .map((candidate) => (candidate as { code?: unknown } | undefined)?.code)
    .filter((code): code is string => typeof code === 'string');
}

/**
 * What opening a file or a socket fails with when the process (EMFILE) or the system (ENFILE)
 * has no descriptor left; SQLite reports it as a file it cannot open.
 */
const OUT_OF_FILES = new Set(['EMFILE', 'ENFILE', 'SQLITE_CANTOPEN']);

/** Whether `error` says a file or socket could not be opened for want of descriptors: passing, once some close. */
export function isOutOfFiles(error: unknown): boolean {
  return errorCodes(error).some((code) => OUT_OF_FILES.has(code));
}
