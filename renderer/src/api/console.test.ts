import { describe, expect, it } from 'vitest';
import { auditLogPath, describeActor, NO_AUDIT_FILTERS, parseJsonObject } from './console';

describe('the audit log query', () => {
  it('asks for the newest entries when nothing is filtered', () => {
    expect(auditLogPath(NO_AUDIT_FILTERS, null)).toBe('/audit-logs');
  });

  it('sends only the filters filled in, trimmed, and the cursor of the page before', () => {
    const path = auditLogPath({ ...NO_AUDIT_FILTERS, action: ' review.decided ', actor_type: 'api_key', target_id: '42', target_type: '  ' }, 17);
    expect(Object.fromEntries(new URL(path, 'http://x').searchParams)).toEqual({ action: 'review.decided', actor_type: 'api_key', target_id: '42', cursor: '17' });
  });

  it('turns local times into instants, an "until" minute including the whole of it', () => {
    const params = new URL(auditLogPath({ ...NO_AUDIT_FILTERS, since: '2026-11-24T09:00', until: '2026-11-24T17:30' }, null), 'http://x').searchParams;
    expect(params.get('since')).toBe(new Date(2026, 10, 24, 9, 0).toISOString());
    expect(params.get('until')).toBe(new Date(2026, 10, 24, 17, 30, 59, 999).toISOString());
  });
});

describe('who the audit log says acted', () => {
  it('names people and keys as the log recorded them', () => {
    expect(describeActor({ type: 'user', id: 'user:5', label: 'Dana Reviewer' })).toBe('Dana Reviewer');
    expect(describeActor({ type: 'api_key', id: 'key:2', label: 'Refund agent' })).toBe('API key “Refund agent”');
  });

  it('falls back to ids for entries recorded without a name', () => {
    expect(describeActor({ type: 'user', id: 'user:9', label: null })).toBe('Person #9');
    expect(describeActor({ type: 'api_key', id: 'key:8', label: null })).toBe('API key #8');
    expect(describeActor({ type: 'system', id: null, label: 'system' })).toBe('System');
    expect(describeActor({ type: 'operator', id: 'operator', label: 'operator' })).toBe('Operator');
  });
});

describe('settings and metadata typed as JSON', () => {
  it('reads an object, and empty text as no settings', () => {
    expect(parseJsonObject('{ "require_two_approvals": true }')).toEqual({ ok: true, value: { require_two_approvals: true } });
    expect(parseJsonObject('  \n')).toEqual({ ok: true, value: {} });
  });

  it('refuses text that is not JSON, or JSON that is not an object, saying which', () => {
    const broken = parseJsonObject('{ "a": }');
    expect(broken.ok === false && broken.error).toMatch(/^This is not valid JSON: /);
    for (const text of ['[1, 2]', 'null', '"text"', '3']) {
      expect(parseJsonObject(text)).toEqual({ ok: false, error: 'This must be a JSON object, in braces: { "name": "value" }' });
    }
  });
});
