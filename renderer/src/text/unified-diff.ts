/**
 * An action that is itself a diff (`diff -u`, `git diff`, a patch an agent proposes to apply),
 * line by line as it should be coloured: file headers, hunk headers, removed, added and context
 * lines. Pure: the proposed-action card lays the lines out.
 */

export type PatchLineKind = 'file' | 'hunk' | 'removed' | 'added' | 'context' | 'note' | 'text';

export interface PatchLine {
  kind: PatchLineKind;
  text: string;
}

const HUNK = /^@@ -\d+(?:,(\d+))? \+\d+(?:,(\d+))? @@/;
/** Lines of git's and diff's own that describe a file rather than change it. */
const FILE_HEADER = /^(?:diff |index |--- |\+\+\+ |new file mode |deleted file mode |old mode |new mode |similarity index |dissimilarity index |rename from |rename to |copy from |copy to |Binary files )/;

/**
 * The action's lines classified, or null when it is not a unified diff: it must have a hunk
 * header (`@@ -1,3 +1,4 @@`) after a pair of `---`/`+++` file lines. Inside a hunk the header's
 * line counts say where it ends, so a removed line that reads `--- x` is still a removed line.
 */
export function patchLines(text: string): PatchLine[] | null {
  if (!/^--- [^\n]*\n\+\+\+ [^\n]*\n@@ -\d/m.test(text)) return null;
  const lines: PatchLine[] = [];
  let oldLeft = 0;
  let newLeft = 0;
  // A CR before a line break is part of the break (CRLF), as in `reveal`; a lone one stays.
  const rows = text.split(/\r?\n/);
  // The line break that ends the last line starts no line of its own.
  if (rows.at(-1) === '') rows.pop();
  for (const line of rows) {
    const hunk = HUNK.exec(line);
    if (oldLeft > 0 || newLeft > 0) {
      const kind = line.startsWith('-') ? 'removed' : line.startsWith('+') ? 'added' : line.startsWith('\\') ? 'note' : 'context';
      if (kind !== 'added' && kind !== 'note') oldLeft -= 1;
      if (kind !== 'removed' && kind !== 'note') newLeft -= 1;
      lines.push({ kind, text: line });
    } else if (hunk) {
      oldLeft = hunk[1] === undefined ? 1 : Number(hunk[1]);
      newLeft = hunk[2] === undefined ? 1 : Number(hunk[2]);
      lines.push({ kind: 'hunk', text: line });
    } else if (line.startsWith('\\')) {
      // "\ No newline at end of file" follows the hunk's last line.
      lines.push({ kind: 'note', text: line });
    } else {
      lines.push({ kind: FILE_HEADER.test(line) ? 'file' : 'text', text: line });
    }
  }
  return lines;
}
