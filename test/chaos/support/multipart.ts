export interface FormPart {
  name: string;
  /** Present for a file part. Written into the header as given: quotes and slashes included. */
  fileName?: string;
  contentType?: string;
  content: Buffer | string;
}

/**
 * A multipart/form-data body built by hand rather than by FormData, which escapes names
 * and fixes its own boundary: the fuzzer needs both under its control.
 */
export function multipartBody(parts: FormPart[], boundary: string): Buffer {
  const chunks: Buffer[] = [];
  for (const part of parts) {
    const disposition = `form-data; name="${part.name}"${part.fileName === undefined ? '' : `; filename="${part.fileName}"`}`;
    const type = part.contentType === undefined ? '' : `Content-Type: ${part.contentType}\r\n`;
    chunks.push(Buffer.from(`--${boundary}\r\nContent-Disposition: ${disposition}\r\n${type}\r\n`), Buffer.from(part.content), Buffer.from('\r\n'));
  }
  chunks.push(Buffer.from(`--${boundary}--\r\n`));
  return Buffer.concat(chunks);
}

/** The upload of one file as `file`, as the API expects it. */
export function fileUpload(content: Buffer, fileName: string, contentType = 'application/octet-stream'): { body: Buffer; headers: Record<string, string> } {
  const boundary = `----chaos${Math.random().toString(16).slice(2)}`;
  return {
    body: multipartBody([{ name: 'file', fileName, contentType, content }], boundary),
    headers: { 'content-type': `multipart/form-data; boundary=${boundary}` },
  };
}
