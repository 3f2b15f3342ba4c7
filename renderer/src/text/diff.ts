/**
 * What changed between two texts, as a reviewer reads it: line by line (removed lines of the
 * first, added lines of the second, unchanged lines around them), and, for short texts, the
 * words that changed inside a changed line. Pure: `DiffView.vue` lays it out.
 *
 * Myers' O(ND) algorithm over lines, then over words within a changed pair of lines. Its work
 * grows with the number of differences, so it is bounded (`WORK_LIMIT`): past it, the part that
 * differs is shown as one removed block then one added block, and `capped` says so.
 */

export type LineKind = 'same' | 'removed' | 'added';

/** A piece of a changed line: `changed` marks the words that are not in its counterpart. */
export interface Segment {
  text: string;
  changed: boolean;
}

export interface DiffLine {
  kind: LineKind;
  /** The line without its line break. */
  text: string;
  /** What ended the line: `\n`, `\r\n`, or nothing for a last line without one. */
  ending: string;
  /** 1-based, in the first text (null for an added line) and in the second (null for a removed one). */
  before: number | null;
  after: number | null;
  /** Word marks, when this line was paired with a similar changed line of the other text. */
  segments?: Segment[];
  /** This line and its counterpart differ only in how they end (a line break, CRLF, none). */
  endingChanged?: boolean;
}

export interface TextDiff {
  lines: DiffLine[];
  removed: number;
  added: number;
  /** The texts differ in too many places to align within the work limit: the middle is one removed block, then one added block. */
  capped: boolean;
}

export interface DiffOptions {
  /** Mark changed words inside changed lines (the view asks for it for short texts). */
  words?: boolean;
  /** Steps of Myers' algorithm before giving up on aligning (for tests). */
  workLimit?: number;
}

/**
 * Steps of an alignment: about ten milliseconds, and a few megabytes kept for the way back,
 * whatever the texts. Two texts of thousands of lines with hundreds of scattered changes stay
 * well within it; past it, aligning more would freeze the page for little gain.
 */
export const WORK_LIMIT = 1_000_000;
/** Word marks are worth their cost for a line up to this long. */
const MAX_WORD_LINE = 2_000;
/** Two lines are a changed pair, worth marking word by word, when at least this share of their text is common. */
const MIN_COMMON_SHARE = 0.4;

/** Lines with their line breaks, so joining them gives the text back. */
export function splitLines(text: string): string[] {
  return text.match(/[^\n]*\n|[^\n]+$/g) ?? [];
}

function lineOf(raw: string): { text: string; ending: string } {
  const ending = raw.endsWith('\r\n') ? '\r\n' : raw.endsWith('\n') ? '\n' : '';
  return { text: raw.slice(0, raw.length - ending.length), ending };
}

type Op = 'same' | 'removed' | 'added';

/**
 * The shortest edit script from `a` to `b` (Myers, "An O(ND) Difference Algorithm and Its
 * Variations", 1986), as operations in order; null once more than `limit` steps were taken.
 * Items compare by `===`, so callers map strings to numbers first.
 */
function editScript(a: ArrayLike<number>, b: ArrayLike<number>, limit: number): Op[] | null {
  const n = a.length;
  const m = b.length;
  const max = n + m;
  const offset = max + 1;
  const v = new Int32Array(2 * max + 3);
  /** For each d, the furthest x on each diagonal k in −d…d, kept for the way back. */
  const trace: Int32Array[] = [];
  let work = 0;
  for (let d = 0; d <= max; d += 1) {
    for (let k = -d; k <= d; k += 2) {
      let x = k === -d || (k !== d && v[offset + k - 1] < v[offset + k + 1]) ? v[offset + k + 1] : v[offset + k - 1] + 1;
      let y = x - k;
      while (x < n && y < m && a[x] === b[y]) {
        x += 1;
        y += 1;
        work += 1;
      }
      v[offset + k] = x;
      work += 1;
      if (x >= n && y >= m) {
        trace.push(v.slice(offset - d, offset + d + 1));
        return backtrack(trace, n, m);
      }
    }
    trace.push(v.slice(offset - d, offset + d + 1));
    if (work > limit) return null;
  }
  return null;
}

function backtrack(trace: Int32Array[], n: number, m: number): Op[] {
  const ops: Op[] = [];
  let x = n;
  let y = m;
  for (let d = trace.length - 1; d > 0; d -= 1) {
    const previous = trace[d - 1];
    const at = (k: number): number => previous[k + d - 1];
    const k = x - y;
    const down = k === -d || (k !== d && at(k - 1) < at(k + 1));
    const previousK = down ? k + 1 : k - 1;
    const previousX = at(previousK);
    const previousY = previousX - previousK;
    while (x > previousX && y > previousY) {
      ops.push('same');
      x -= 1;
      y -= 1;
    }
    ops.push(down ? 'added' : 'removed');
    if (down) y -= 1;
    else x -= 1;
  }
  while (x > 0 && y > 0) {
    ops.push('same');
    x -= 1;
    y -= 1;
  }
  return ops.reverse();
}

/**
 * The same script by the textbook longest-common-subsequence table, for when one side is short
 * and the other long: Myers' work grows with the square of the differences, this table's with
 * the product of the lengths. Directions are kept a byte a cell for the way back.
 */
function tableScript(a: ArrayLike<number>, b: ArrayLike<number>): Op[] {
  const n = a.length;
  const m = b.length;
  const UP = 1;
  const LEFT = 2;
  const DIAGONAL = 3;
  const way = new Uint8Array((n + 1) * (m + 1));
  let previous = new Int32Array(m + 1);
  let current = new Int32Array(m + 1);
  for (let i = 1; i <= n; i += 1) {
    for (let j = 1; j <= m; j += 1) {
      const cell = i * (m + 1) + j;
      if (a[i - 1] === b[j - 1]) {
        current[j] = previous[j - 1] + 1;
        way[cell] = DIAGONAL;
      } else if (previous[j] >= current[j - 1]) {
        current[j] = previous[j];
        way[cell] = UP;
      } else {
        current[j] = current[j - 1];
        way[cell] = LEFT;
      }
    }
    [previous, current] = [current, previous];
  }
  const ops: Op[] = [];
  let i = n;
  let j = m;
  while (i > 0 || j > 0) {
    const step = i === 0 ? LEFT : j === 0 ? UP : way[i * (m + 1) + j];
    if (step === DIAGONAL) {
      ops.push('same');
      i -= 1;
      j -= 1;
    } else if (step === UP) {
      ops.push('removed');
      i -= 1;
    } else {
      ops.push('added');
      j -= 1;
    }
  }
  return ops.reverse();
}

/** Each distinct string as a small number, the same number for equal strings of `a` and `b`. */
function numbered(a: readonly string[], b: readonly string[]): [Int32Array, Int32Array] {
  const ids = new Map<string, number>();
  const idOf = (item: string): number => {
    let id = ids.get(item);
    if (id === undefined) ids.set(item, (id = ids.size));
    return id;
  };
  return [Int32Array.from(a, idOf), Int32Array.from(b, idOf)];
}

/**
 * Operations turning `a` into `b`: the common start and end first taken off (cheap, and most
 * edits are local), the middle aligned by Myers or, when one side of it is short, by the
 * table; past the limit, removed then added.
 */
function align(a: readonly string[], b: readonly string[], limit: number): { ops: Op[]; capped: boolean } {
  let start = 0;
  while (start < a.length && start < b.length && a[start] === b[start]) start += 1;
  let end = 0;
  while (end < a.length - start && end < b.length - start && a[a.length - 1 - end] === b[b.length - 1 - end]) end += 1;
  const [middleA, middleB] = numbered(a.slice(start, a.length - end), b.slice(start, b.length - end));
  // With one side empty there is nothing to align: the other is all removed or all added.
  const both = middleA.length > 0 && middleB.length > 0;
  const aligned = both ? (editScript(middleA, middleB, limit) ?? (middleA.length * middleB.length <= limit ? tableScript(middleA, middleB) : null)) : null;
  const same = (count: number): Op[] => Array<Op>(count).fill('same');
  const ops = aligned ?? [...Array<Op>(middleA.length).fill('removed'), ...Array<Op>(middleB.length).fill('added')];
  return { ops: [...same(start), ...ops, ...same(end)], capped: both && aligned === null };
}

/** Words, runs of white space, and single other characters: the units word marks are made of. */
function tokens(line: string): string[] {
  return line.match(/[\p{L}\p{M}\p{N}_]+|\s+|[^]/gu) ?? [];
}

/** Adjacent pieces of the same kind joined; white space between two changes joins them. */
function merged(pieces: Segment[]): Segment[] {
  const bridged = pieces.map((piece, i) =>
    !piece.changed && /^\s+$/.test(piece.text) && pieces[i - 1]?.changed && pieces[i + 1]?.changed ? { ...piece, changed: true } : piece,
  );
  const out: Segment[] = [];
  for (const piece of bridged) {
    const last = out[out.length - 1];
    if (last && last.changed === piece.changed) last.text += piece.text;
    else out.push({ ...piece });
  }
  return out;
}

/** Word marks for a removed line and the added line that took its place, or null when they have too little in common. */
function wordMarks(removed: string, added: string): [Segment[], Segment[]] | null {
  if (removed.length > MAX_WORD_LINE || added.length > MAX_WORD_LINE) return null;
  const a = tokens(removed);
  const b = tokens(added);
  const [idsA, idsB] = numbered(a, b);
  const ops = editScript(idsA, idsB, WORK_LIMIT);
  if (!ops) return null;
  const before: Segment[] = [];
  const after: Segment[] = [];
  let i = 0;
  let j = 0;
  let common = 0;
  for (const op of ops) {
    if (op === 'same') {
      common += /^\s+$/.test(a[i]) ? 0 : a[i].length;
      before.push({ text: a[i++], changed: false });
      after.push({ text: b[j++], changed: false });
    } else if (op === 'removed') before.push({ text: a[i++], changed: true });
    else after.push({ text: b[j++], changed: true });
  }
  const longer = Math.max(removed.replace(/\s+/g, '').length, added.replace(/\s+/g, '').length);
  if (longer === 0 || common / longer < MIN_COMMON_SHARE) return null;
  return [merged(before), merged(after)];
}

/** Within a run of changes, the i-th removed line pairs with the i-th added one. */
function markWords(lines: DiffLine[]): void {
  let i = 0;
  while (i < lines.length) {
    if (lines[i].kind === 'same') {
      i += 1;
      continue;
    }
    const removed: DiffLine[] = [];
    const added: DiffLine[] = [];
    for (; i < lines.length && lines[i].kind !== 'same'; i += 1) (lines[i].kind === 'removed' ? removed : added).push(lines[i]);
    for (let pair = 0; pair < Math.min(removed.length, added.length); pair += 1) {
      const [old, now] = [removed[pair], added[pair]];
      if (old.text === now.text) {
        old.endingChanged = now.endingChanged = true;
        continue;
      }
      const marks = wordMarks(old.text, now.text);
      if (marks) [old.segments, now.segments] = marks;
    }
  }
}

/** Removed lines before added ones within each run of changes, as diffs are read. */
function grouped(lines: DiffLine[]): DiffLine[] {
  const out: DiffLine[] = [];
  let run: DiffLine[] = [];
  const flush = (): void => {
    out.push(...run.filter((line) => line.kind === 'removed'), ...run.filter((line) => line.kind === 'added'));
    run = [];
  };
  for (const line of lines) {
    if (line.kind === 'same') {
      flush();
      out.push(line);
    } else run.push(line);
  }
  flush();
  return out;
}

/** The line diff from `before` to `after`. */
export function diffTexts(before: string, after: string, options: DiffOptions = {}): TextDiff {
  const a = splitLines(before);
  const b = splitLines(after);
  const { ops, capped } = align(a, b, options.workLimit ?? WORK_LIMIT);
  const lines: DiffLine[] = [];
  let i = 0;
  let j = 0;
  for (const op of ops) {
    if (op === 'same') lines.push({ kind: 'same', ...lineOf(a[i]), before: i + 1, after: j + 1 });
    else if (op === 'removed') lines.push({ kind: 'removed', ...lineOf(a[i]), before: i + 1, after: null });
    else lines.push({ kind: 'added', ...lineOf(b[j]), before: null, after: j + 1 });
    if (op !== 'added') i += 1;
    if (op !== 'removed') j += 1;
  }
  const result = grouped(lines);
  if (options.words && !capped) markWords(result);
  return {
    lines: result,
    removed: result.filter((line) => line.kind === 'removed').length,
    added: result.filter((line) => line.kind === 'added').length,
    capped,
  };
}

/** A row of the view: a line, or a run of unchanged lines folded into one. */
export type DiffRow = { kind: 'line'; line: DiffLine } | { kind: 'fold'; lines: DiffLine[]; at: number };

/**
 * The diff as rows, each run of unchanged lines longer than `context` lines either side of a
 * change (and longer than the fold would save) folded; `open` lists the folds, by their first
 * line's index, shown in full.
 */
export function foldUnchanged(lines: readonly DiffLine[], context: number, open: ReadonlySet<number> = new Set()): DiffRow[] {
  const rows: DiffRow[] = [];
  let i = 0;
  while (i < lines.length) {
    if (lines[i].kind !== 'same') {
      rows.push({ kind: 'line', line: lines[i++] });
      continue;
    }
    let end = i;
    while (end < lines.length && lines[end].kind === 'same') end += 1;
    const keepBefore = i === 0 ? 0 : context;
    const keepAfter = end === lines.length ? 0 : context;
    const foldFrom = i + keepBefore;
    const foldTo = end - keepAfter;
    if (foldTo - foldFrom > 1 && !open.has(foldFrom)) {
      for (let k = i; k < foldFrom; k += 1) rows.push({ kind: 'line', line: lines[k] });
      rows.push({ kind: 'fold', lines: lines.slice(foldFrom, foldTo), at: foldFrom });
      for (let k = foldTo; k < end; k += 1) rows.push({ kind: 'line', line: lines[k] });
    } else {
      for (let k = i; k < end; k += 1) rows.push({ kind: 'line', line: lines[k] });
    }
    i = end;
  }
  return rows;
}
