import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { canonicalJson, entryHash, GENESIS_HASH } from '../../server/domain/organizations/audit';

const entry = {
  organization_id: 1,
  action: 'review.decided',
  target_type: 'review',
  target_id: 42,
  data: { decision_type: 'approve' },
  created_at: '2026-11-24T09:05:00.000Z',
};

/** The hash as entries were hashed before actors had labels: SHA-256 of the previous hash and the canonical JSON. */
function hashWithoutLabels(actor: { type: string; id: string | null }): string {
  return createHash('sha256').update(GENESIS_HASH).update(canonicalJson({ ...entry, actor })).digest('hex');
}

describe("an audit entry's hash", () => {
  it('stays what it was for an entry written before actors had labels', () => {
    const actor = { type: 'api_key' as const, id: 'key:2' };
    expect(entryHash(GENESIS_HASH, { ...entry, actor: { ...actor, label: null } })).toBe(hashWithoutLabels(actor));
  });

  it("covers the actor's label: renaming who acted breaks the chain", () => {
    const labelled = entryHash(GENESIS_HASH, { ...entry, actor: { type: 'user', id: 'user:5', label: 'Dana' } });
    expect(labelled).not.toBe(entryHash(GENESIS_HASH, { ...entry, actor: { type: 'user', id: 'user:5', label: 'Mallory' } }));
    expect(labelled).not.toBe(hashWithoutLabels({ type: 'user', id: 'user:5' }));
  });
});
