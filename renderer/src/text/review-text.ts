import type { AttachmentRecord, ReviewRecord } from '../api/types';
import { describeFindings, type Findings, findingsOf, isClean, type Piece, reveal } from './reveal';

/** What one part of a review holds that could hide or disguise text. */
export interface TextWarning {
  where: string;
  findings: Findings;
  /** `findings` in words. */
  found: string[];
}

/** Every string in metadata, keys included, at any depth. */
function metadataStrings(value: unknown): string[] {
  if (typeof value === 'string') return [value];
  if (Array.isArray(value)) return value.flatMap(metadataStrings);
  if (typeof value === 'object' && value !== null) return Object.entries(value).flatMap(([key, item]) => [key, ...metadataStrings(item)]);
  return [];
}

/**
 * The agent's text of a review, part by part, that holds hidden characters, long runs of
 * blank lines or spaces, or words mixing scripts. Empty for an ordinary review.
 */
export function reviewTextWarnings(review: ReviewRecord, attachments: readonly AttachmentRecord[] = []): TextWarning[] {
  const parts: Array<[string, string[]]> = [
    ['the task type', [review.task_type]],
    ['the proposed action', [review.proposed_action]],
    ["the agent's reasoning", review.agent_reasoning ? [review.agent_reasoning] : []],
    ['the framework', review.framework ? [review.framework] : []],
    ['the metadata', metadataStrings(review.metadata)],
    ['the attachments', attachments.flatMap((attachment) => [attachment.file_name, attachment.description ?? ''])],
  ];
  return parts.flatMap(([where, texts]) => {
    const findings = findingsOf(texts.flatMap((text): Piece[] => reveal(text)));
    return isClean(findings) ? [] : [{ where, findings, found: describeFindings(findings) }];
  });
}

/** The queue row's badge: the gist of the warnings, e.g. "2 hidden characters". */
export function warningBadge(warnings: readonly TextWarning[]): string {
  const hidden = warnings.reduce((sum, warning) => sum + warning.findings.hidden.reduce((n, entry) => n + entry.count, 0), 0);
  if (hidden > 0) return `${hidden} hidden character${hidden === 1 ? '' : 's'}`;
  if (warnings.some((warning) => warning.findings.mixedWords.length > 0)) return 'mixed scripts';
  if (warnings.some((warning) => warning.findings.blankLines > 0)) return 'many blank lines';
  return 'long run of spaces';
}

/**
 * How the dashboard names a review's agent: its name (registered, or sent as `agent_name`);
 * a registered agent of a review filed before names were kept, by its id; null for none.
 */
export function agentLabel(review: Pick<ReviewRecord, 'agent_id' | 'agent_name'>): string | null {
  return review.agent_name ?? (review.agent_id === null ? null : `agent #${review.agent_id}`);
}
