import { createPinia, setActivePinia } from 'pinia';
import { beforeEach, describe, expect, it } from 'vitest';
import { useSessionStore } from './session';

beforeEach(() => setActivePinia(createPinia()));

describe('useSessionStore', () => {
  it('asks for a key without calling it wrong when none was sent', () => {
    const session = useSessionStore();
    session.refused(null);
    expect(session).toMatchObject({ keyNeeded: true, keyRejected: false, apiKey: null });
  });

  it('says a key was rejected, and ignores late refusals of that same old key', () => {
    const session = useSessionStore();
    session.useKey('  wrong-key  ');
    expect(session.apiKey).toBe('wrong-key');
    session.refused('wrong-key');
    session.refused('wrong-key');
    expect(session).toMatchObject({ keyNeeded: true, keyRejected: true, apiKey: null });

    session.useKey('right-key');
    session.refused('wrong-key');
    expect(session).toMatchObject({ keyNeeded: false, keyRejected: false, apiKey: 'right-key' });
  });

  it('remembers the reviewer name, trimmed', () => {
    const session = useSessionStore();
    session.setReviewerName(' dana@example.com ');
    expect(session.reviewerName).toBe('dana@example.com');
  });
});
