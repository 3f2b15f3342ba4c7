import busboy from 'busboy';
import type { Request } from 'express';
import { type AttachmentFiles, FileTooLargeError, type IncomingFile } from '../storage/attachment-files';
import { AppError, invalidInput } from '../domain/shared/errors';

/** Room for multipart boundaries and part headers on top of each file itself. */
export const MULTIPART_OVERHEAD_BYTES = 64 * 1024;

/** Refuses (413), before reading it, a body that announces itself as larger than `limitBytes`. */
export function refuseAnnouncedOver(req: Request, limitBytes: number, detail: string): void {
  const announced = Number(req.get('content-length') ?? 0);
  if (announced > limitBytes) throw new AppError(413, detail);
}

export interface ReceivedFile {
  incoming: IncomingFile;
  fileName: string | undefined;
  contentType: string | undefined;
}

export interface ReceivedUpload extends ReceivedFile {
  fields: Record<string, string>;
}

export interface ReceivedParts {
  /** In the order they were sent. */
  files: ReceivedFile[];
  fields: Record<string, string>;
}

interface TextField {
  maxLength: number;
  /** The status a value past `maxLength` is refused with: 400, or 413 for a part that is the body's substance. */
  tooLongStatus?: 400 | 413;
}

export interface PartRules {
  files: AttachmentFiles;
  fileField: string;
  maxBytes: number;
  /** Most file parts; one more is refused with `tooManyFiles`. */
  maxFiles: number;
  tooManyFiles: () => AppError;
  /** Text fields allowed besides the files, with their maximum length in characters. */
  textFields: Record<string, TextField>;
}

export interface UploadRules {
  files: AttachmentFiles;
  fileField: string;
  maxBytes: number;
  /** Text fields allowed besides the file, with their maximum length in characters. */
  textFields: Record<string, number>;
}

/**
 * Reads a multipart/form-data request holding one file (an upload to a review), streaming the
 * file to disk as it arrives. Rejects with 413 the moment the file passes `maxBytes` (the
 * partial file is removed), and with 400 for anything else out of place.
 */
export async function receiveUpload(req: Request, rules: UploadRules): Promise<ReceivedUpload> {
  const textFields = Object.fromEntries(Object.entries(rules.textFields).map(([name, maxLength]) => [name, { maxLength }]));
  const parts = await receiveParts(req, {
    ...rules,
    textFields,
    maxFiles: 1,
    tooManyFiles: () => invalidInput(rules.fileField, 'must be sent once; one file per upload'),
  });
  const [file] = parts.files;
  if (!file) throw invalidInput(rules.fileField, `is required: send the file as a multipart part named "${rules.fileField}"`);
  return { ...file, fields: parts.fields };
}

/**
 * Reads a multipart/form-data request of text fields and up to `maxFiles` files, streaming
 * each file to disk as it arrives; nothing is held whole in memory. Rejects with 413 the
 * moment a file passes `maxBytes`, and with 400 for anything else out of place; on any
 * refusal, every file received so far is removed. On success the caller owns the files.
 */
export function receiveParts(req: Request, rules: PartRules): Promise<ReceivedParts> {
  return new Promise((resolve, reject) => {
    const textLimits = Object.values(rules.textFields).map((field) => field.maxLength);
    let parser: busboy.Busboy;
    try {
      parser = busboy({
        headers: req.headers,
        // Browsers and HTTP clients send file names as raw UTF-8.
        defParamCharset: 'utf8',
        limits: {
          files: rules.maxFiles,
          fields: Object.keys(rules.textFields).length,
          fieldSize: Math.max(0, ...textLimits) * 4,
          fieldNameSize: 100,
          headerPairs: 50,
        },
      });
    } catch (error) {
      reject(new AppError(400, `the multipart body cannot be read: ${(error as Error).message}`));
      return;
    }

    const fields: Record<string, string> = {};
    const streams: Array<NodeJS.ReadableStream & { destroy(): void }> = [];
    /** One per file part, in order, each with what its part said of itself. */
    const receiving: Array<{ file: Promise<IncomingFile>; fileName: string | undefined; contentType: string | undefined }> = [];
    let settled = false;

    /** Removes every file received; settles once they are gone (a file cut off removes itself). */
    const discardAll = (): Promise<unknown> =>
      Promise.allSettled(receiving.map(({ file }) => file.then((incoming) => rules.files.discard(incoming.tempPath))));
    const fail = (error: unknown): void => {
      if (settled) return;
      settled = true;
      req.unpipe(parser);
      for (const stream of streams) stream.destroy();
      // Keep reading (and dropping) what the client still sends, so it receives our answer.
      req.resume();
      // Answered once the files are gone: a refusal leaves nothing behind, even for a moment.
      void discardAll().then(() => reject(error));
    };

    parser.on('file', (name, stream, info) => {
      // A part parsed from the same chunk as the refusal: its body will never be fed on, so a
      // file begun for it would neither finish nor be removed.
      if (settled) return void stream.resume();
      if (name !== rules.fileField) {
        stream.resume();
        const textField = Object.hasOwn(rules.textFields, name);
        fail(invalidInput(name, textField ? 'must be a text part, sent without a filename' : `is not a known field; send files as "${rules.fileField}"`));
        return;
      }
      streams.push(stream);
      // Listened to at once: busboy reports a part cut off by the end of the body on the part's
      // stream, possibly before the copy to disk is under way — unheard, that error ends the
      // process. The copy's own outcome, below, says what went wrong.
      stream.on('error', () => undefined);
      const file = rules.files.receive(stream, rules.maxBytes);
      receiving.push({ file, fileName: info.filename, contentType: info.mimeType });
      file.catch((error: unknown) => {
        if (error instanceof FileTooLargeError) {
          fail(new AppError(413, `the file is larger than max_attachment_bytes (${rules.maxBytes} bytes)`));
        } else if (isFileSystemError(error)) {
          fail(error);
        } else {
          fail(new AppError(400, `the multipart body cannot be read: ${(error as Error).message}`));
        }
      });
    });
    parser.on('field', (name, value, info) => {
      const rule = rules.textFields[name];
      if (rule === undefined) return fail(invalidInput(name, 'is not a known field'));
      if (info.valueTruncated || value.length > rule.maxLength) {
        const problem = invalidInput(name, `must be at most ${rule.maxLength} characters long`);
        return fail(rule.tooLongStatus === 413 ? new AppError(413, problem.detail, problem.members) : problem);
      }
      fields[name] = value;
    });
    parser.on('filesLimit', () => fail(rules.tooManyFiles()));
    parser.on('fieldsLimit', () => fail(new AppError(400, 'too many fields in the multipart body')));
    parser.on('error', (error: Error) => fail(new AppError(400, `the multipart body cannot be read: ${error.message}`)));
    parser.on('close', () => {
      if (settled) return;
      Promise.all(receiving.map((part) => part.file)).then(
        (incoming) => {
          if (settled) return;
          settled = true;
          resolve({ files: receiving.map(({ fileName, contentType }, index) => ({ incoming: incoming[index], fileName, contentType })), fields });
        },
        () => undefined,
      );
    });
    // A client that hangs up mid-body: busboy never sees the end, so the partial files are dropped here.
    req.on('close', () => {
      if (!req.complete) fail(new AppError(400, 'the upload was interrupted'));
    });
    req.pipe(parser);
  });
}

/** A failure of our own disk (full, unwritable) rather than of what the client sent. */
function isFileSystemError(error: unknown): boolean {
  return typeof (error as NodeJS.ErrnoException | undefined)?.syscall === 'string';
}
