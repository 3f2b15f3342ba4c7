import busboy from 'busboy';
import type { Request } from 'express';
import { type AttachmentFiles, FileTooLargeError, type IncomingFile } from '../storage/attachment-files';
import { AppError, invalidInput } from '../domain/shared/errors';

export interface ReceivedUpload {
  incoming: IncomingFile;
  fileName: string | undefined;
  contentType: string | undefined;
  fields: Record<string, string>;
}

export interface UploadRules {
  files: AttachmentFiles;
  fileField: string;
  maxBytes: number;
  /** Text fields allowed besides the file, with their maximum length in characters. */
  textFields: Record<string, number>;
}

/**
 * Reads a multipart/form-data request holding one file, streaming the file to disk as it
 * arrives; nothing is held whole in memory. Rejects with 413 the moment the file passes
 * `maxBytes` (the partial file is removed), and with 400 for anything else out of place.
 */
export function receiveUpload(req: Request, rules: UploadRules): Promise<ReceivedUpload> {
  return new Promise((resolve, reject) => {
    let parser: busboy.Busboy;
    try {
      parser = busboy({
        headers: req.headers,
        // Browsers and HTTP clients send file names as raw UTF-8.
        defParamCharset: 'utf8',
        limits: {
          files: 1,
          fields: Object.keys(rules.textFields).length,
          fieldSize: Math.max(0, ...Object.values(rules.textFields)) * 4,
          fieldNameSize: 100,
          headerPairs: 50,
        },
      });
    } catch (error) {
      reject(new AppError(400, `the multipart body cannot be read: ${(error as Error).message}`));
      return;
    }

    const fields: Record<string, string> = {};
    let fileStream: (NodeJS.ReadableStream & { destroy(): void }) | undefined;
    let receiving: Promise<IncomingFile> | undefined;
    let fileInfo: Pick<ReceivedUpload, 'fileName' | 'contentType'> = { fileName: undefined, contentType: undefined };
    let settled = false;

    const fail = (error: unknown): void => {
      if (settled) return;
      settled = true;
      req.unpipe(parser);
      fileStream?.destroy();
      // Keep reading (and dropping) what the client still sends, so it receives our answer.
      req.resume();
      receiving?.then((incoming) => rules.files.discard(incoming.tempPath), () => undefined);
      reject(error);
    };

    parser.on('file', (name, stream, info) => {
      // A part parsed from the same chunk as the refusal: its body will never be fed on, so a
      // file begun for it would neither finish nor be removed.
      if (settled) return void stream.resume();
      if (name !== rules.fileField) {
        stream.resume();
        fail(invalidInput(name, `is not a known field; send the file as "${rules.fileField}"`));
        return;
      }
      fileStream = stream;
      // Listened to at once: busboy reports a part cut off by the end of the body on the part's
      // stream, possibly before the copy to disk is under way — unheard, that error ends the
      // process. The copy's own outcome, below, says what went wrong.
      stream.on('error', () => undefined);
      fileInfo = { fileName: info.filename, contentType: info.mimeType };
      receiving = rules.files.receive(stream, rules.maxBytes);
      receiving.catch((error: unknown) => {
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
      const maxLength = rules.textFields[name];
      if (maxLength === undefined) return fail(invalidInput(name, 'is not a known field'));
      if (info.valueTruncated || value.length > maxLength) return fail(invalidInput(name, `must be at most ${maxLength} characters long`));
      fields[name] = value;
    });
    parser.on('filesLimit', () => fail(invalidInput(rules.fileField, 'must be sent once; one file per upload')));
    parser.on('fieldsLimit', () => fail(new AppError(400, 'too many fields in the multipart body')));
    parser.on('error', (error: Error) => fail(new AppError(400, `the multipart body cannot be read: ${error.message}`)));
    parser.on('close', () => {
      if (settled) return;
      if (!receiving) return fail(invalidInput(rules.fileField, 'is required: send the file as a multipart part named "file"'));
      receiving.then(
        (incoming) => {
          if (settled) return void rules.files.discard(incoming.tempPath);
          settled = true;
          resolve({ incoming, ...fileInfo, fields });
        },
        () => undefined,
      );
    });
    // A client that hangs up mid-body: busboy never sees the end, so the partial file is dropped here.
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
