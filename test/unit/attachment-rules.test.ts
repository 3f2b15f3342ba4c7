import { describe, expect, it } from 'vitest';
import { dispositionFor, normalizeContentType, sanitizeFileName } from '../../server/domain/reviews/attachments';

describe('sanitizeFileName', () => {
  it.each([
    ['report.pdf', 'report.pdf'],
    ['../../etc/passwd', 'passwd'],
    ['C:\\Windows\\system32\\cmd.exe', 'cmd.exe'],
    ['bad\u0000na\u0001m\u007fe\u0085.txt', 'badname.txt'],
    ['line\nbreak\r.txt', 'linebreak.txt'],
    ['invoice\u202efdp.exe', 'invoicefdp.exe'],
    ['  spaced out  ', 'spaced out'],
    ['...', 'file'],
    ['.env', 'env'],
    ['', 'file'],
    [undefined, 'file'],
    ['dir/', 'file'],
  ])('turns %j into %j', (raw, expected) => {
    expect(sanitizeFileName(raw)).toBe(expected);
  });

  it('keeps names within 255 bytes, extension included', () => {
    const name = sanitizeFileName(`${'é'.repeat(300)}.pdf`);
    expect(Buffer.byteLength(name)).toBeLessThanOrEqual(255);
    expect(name.endsWith('.pdf')).toBe(true);
  });
});

describe('normalizeContentType', () => {
  it.each([
    ['image/PNG', 'image/png'],
    ['text/plain; charset=latin1', 'text/plain'],
    ['not a type', 'application/octet-stream'],
    ['text/html\r\nX-Evil: 1', 'application/octet-stream'],
    ['', 'application/octet-stream'],
    [undefined, 'application/octet-stream'],
  ])('turns %j into %j', (raw, expected) => {
    expect(normalizeContentType(raw)).toBe(expected);
  });
});

describe('dispositionFor', () => {
  it.each(['image/png', 'image/jpeg', 'image/gif', 'image/webp', 'application/pdf', 'text/plain'])('shows %s inline', (type) => {
    expect(dispositionFor(type)).toBe('inline');
  });

  it.each(['text/html', 'image/svg+xml', 'application/xml', 'text/xml', 'application/xhtml+xml', 'text/javascript', 'application/octet-stream'])(
    'makes %s a download',
    (type) => {
      expect(dispositionFor(type)).toBe('attachment');
    },
  );
});
