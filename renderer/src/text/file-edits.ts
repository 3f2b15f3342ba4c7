import type { ReviewRecord } from '../api/types';

/**
 * Claude Code's file tools as the changes they make (the hook files them as
 * `claude-code:<Tool>`, the tool's input as JSON in the action): `Edit` replaces one string,
 * `MultiEdit` several in order, `Write` writes a whole file.
 */
export interface FileChange {
  tool: 'Edit' | 'MultiEdit' | 'Write';
  filePath: string;
  /** For `Write`, one edit from nothing to the file's content. */
  edits: Array<{ before: string; after: string; replaceAll: boolean }>;
}

const FILE_TOOL = /^claude-code:(Edit|MultiEdit|Write)$/;

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Whether `value` has exactly the `required` keys, perhaps some `optional` ones, and nothing else. */
function hasOnly(value: Record<string, unknown>, required: readonly string[], optional: readonly string[] = []): boolean {
  const keys = Object.keys(value);
  return required.every((key) => key in value) && keys.every((key) => required.includes(key) || optional.includes(key));
}

function editOf(value: unknown): FileChange['edits'][number] | null {
  if (!isObject(value) || !hasOnly(value, ['old_string', 'new_string'], ['replace_all'])) return null;
  const { old_string: before, new_string: after, replace_all: replaceAll = false } = value;
  if (typeof before !== 'string' || typeof after !== 'string' || typeof replaceAll !== 'boolean') return null;
  return { before, after, replaceAll };
}

/**
 * The file change a Claude Code review proposes, read from its action (what the reviewer
 * approves, not the metadata), or null when it is not one. Anything the tool input holds beyond
 * what a file change shows (an unknown key, a value of another type) makes it null, so the
 * action is shown as its JSON instead and nothing in it goes unseen.
 */
export function fileChangeOf(review: Pick<ReviewRecord, 'task_type' | 'proposed_action'>): FileChange | null {
  const tool = FILE_TOOL.exec(review.task_type)?.[1] as FileChange['tool'] | undefined;
  if (!tool) return null;
  let input: unknown;
  try {
    input = JSON.parse(review.proposed_action);
  } catch {
    return null;
  }
  if (!isObject(input) || typeof input.file_path !== 'string') return null;
  const filePath = input.file_path;
  if (tool === 'Write') {
    if (!hasOnly(input, ['file_path', 'content']) || typeof input.content !== 'string') return null;
    return { tool, filePath, edits: [{ before: '', after: input.content, replaceAll: false }] };
  }
  if (tool === 'Edit') {
    const { file_path: _path, ...rest } = input;
    const edit = hasOnly(input, ['file_path', 'old_string', 'new_string'], ['replace_all']) ? editOf(rest) : null;
    return edit ? { tool, filePath, edits: [edit] } : null;
  }
  if (!hasOnly(input, ['file_path', 'edits']) || !Array.isArray(input.edits) || input.edits.length === 0) return null;
  const edits = input.edits.map(editOf);
  return edits.every((edit) => edit !== null) ? { tool, filePath, edits: edits as FileChange['edits'] } : null;
}
