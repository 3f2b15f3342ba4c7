import { createPinia, setActivePinia } from 'pinia';
import { beforeEach, describe, expect, it } from 'vitest';
import type { SessionView } from '../api/types';
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

  describe('in the hosted edition', () => {
    const signedIn = (role: 'admin' | 'reviewer' | 'viewer'): SessionView => ({
      user: { id: 5, organization_id: 1, email: 'dana@acme.example', name: 'Dana', role, is_active: true, password_set: true, slack_user_id: null, created_at: '', updated_at: '' },
      organization: { id: 1, name: 'Acme' },
      teams: ['finance'],
      csrf_token: 'token',
      expires_at: '',
    });

    it('is the signed-in person: their e-mail for "Mine", their name on decisions, their role for what they may do', () => {
      const session = useSessionStore();
      session.edition = 'hosted';
      session.setReviewerName('typed by hand');
      session.signedIn(signedIn('viewer'));
      expect(session).toMatchObject({ identity: 'dana@acme.example', decidingAs: 'Dana', canDecide: false, isAdmin: false });
      expect(session.me).toEqual({ email: 'dana@acme.example', teams: ['finance'] });
      session.signedIn(signedIn('admin'));
      expect(session).toMatchObject({ canDecide: true, isAdmin: true });
    });

    it("follows the signed-in person's own role changed in the console, and no one else's", () => {
      const session = useSessionStore();
      session.edition = 'hosted';
      session.signedIn(signedIn('admin'));
      session.personChanged({ ...signedIn('admin').user, id: 6, role: 'viewer' });
      expect(session.isAdmin).toBe(true);
      session.personChanged({ ...signedIn('admin').user, role: 'reviewer' });
      expect(session).toMatchObject({ isAdmin: false, canDecide: true, account: { user: { role: 'reviewer' }, organization: { name: 'Acme' } } });
    });

    it('asks to sign in again, not for a key, when the API refuses the session', () => {
      const session = useSessionStore();
      session.edition = 'hosted';
      session.signedIn(signedIn('reviewer'));
      session.refused(null);
      expect(session).toMatchObject({ account: null, signInNeeded: true, keyNeeded: false });
    });
  });
});
