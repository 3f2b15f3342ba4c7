import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { canonicalJson, entryHash, GENESIS_HASH, hashedText } from '../../server/domain/organizations/audit';

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

describe('canonical JSON', () => {
  it('sorts keys at every level by code unit, leaves undefined members out and writes undefined items as JSON.stringify would join them', () => {
    const value = { b: 1, a: [1, undefined, null, { z: undefined, y: 'é\u2028', x: [[]] }], c: undefined, é: 2, Z: 3, 10: 4, 9: 5 };
    expect(canonicalJson(value)).toBe('{"10":4,"9":5,"Z":3,"a":[1,,null,{"x":[[]],"y":"é\u2028"}],"b":1,"é":2}');
    expect(canonicalJson([undefined])).toBe('[]');
    expect(canonicalJson({ when: new Date(0), nothing: null, flag: true, n: 1.5 })).toBe('{"flag":true,"n":1.5,"nothing":null,"when":{}}');
  });

  it('is the text an entry has always been hashed with', () => {
    // Written before canonicalJson was rewritten in one pass; a stored chain verifies against this.
    expect(entryHash(GENESIS_HASH, { ...entry, actor: { type: 'user', id: 'user:5', label: 'Dana' } })).toBe(
      createHash('sha256')
        .update(GENESIS_HASH)
        .update('{"action":"review.decided","actor":{"id":"user:5","label":"Dana","type":"user"},"created_at":"2026-11-24T09:05:00.000Z","data":{"decision_type":"approve"},"organization_id":1,"target_id":42,"target_type":"review"}')
        .digest('hex'),
    );
  });
});

describe("an entry's hashed text", () => {
  it('is the canonical JSON of its fields, whatever its actor, target and data', () => {
    const actors = [
      { type: 'user' as const, id: 'user:5', label: 'Dana "the reviewer" \u2028' },
      { type: 'api_key' as const, id: 'key:2', label: null },
      { type: 'system' as const, id: null, label: 'system' },
      { type: 'system' as const, id: null, label: null },
    ];
    const variants = [entry, { ...entry, target_id: null, data: { z: [1, { b: null, a: 'é' }], a: undefined, '': 0 } }, { ...entry, action: 'key.revoked', data: {} }];
    for (const actor of actors) {
      for (const variant of variants) {
        const written = actor.label === null ? { type: actor.type, id: actor.id } : actor;
        expect(hashedText({ ...variant, actor })).toBe(canonicalJson({ ...variant, actor: written }));
      }
    }
  });
});
