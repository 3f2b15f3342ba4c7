import { defineStore } from 'pinia';
import { computed, ref } from 'vue';
import type { Edition, SessionView, UserRecord } from '../api/types';

/** Storage that also works where the Web Storage API does not exist (unit tests under Node). */
function storage(kind: 'sessionStorage' | 'localStorage'): Pick<Storage, 'getItem' | 'setItem' | 'removeItem'> {
  const available = (globalThis as Partial<Record<typeof kind, Storage>>)[kind];
  if (available) return available;
  const memory = new Map<string, string>();
  return {
    getItem: (key) => memory.get(key) ?? null,
    setItem: (key, value) => void memory.set(key, value),
    removeItem: (key) => void memory.delete(key),
  };
}

const KEY_ITEM = 'greenlight.apiKey';
const REVIEWER_ITEM = 'greenlight.reviewerName';
/** Set once a self-hosted reviewer has been asked their name (and chose to give none). */
const NAME_ASKED_ITEM = 'greenlight.reviewerNameAsked';

/**
 * Who is reviewing, and how the API knows it. In the self-hosted edition: an API key, kept for
 * this browser session only, and a name the reviewer types, remembered across sessions. In the
 * hosted edition: the signed-in person (their session cookie, which no script can read, and
 * its CSRF token).
 */
export const useSessionStore = defineStore('session', () => {
  const session = storage('sessionStorage');
  const local = storage('localStorage');

  /** Null until the API has said which edition it is. */
  const edition = ref<Edition | null>(null);
  const apiKey = ref<string | null>(session.getItem(KEY_ITEM));
  const reviewerName = ref(local.getItem(REVIEWER_ITEM) ?? '');
  const nameAsked = ref(local.getItem(NAME_ASKED_ITEM) !== null);
  /** The API answered 401: the key prompt is shown. */
  const keyNeeded = ref(false);
  /** A key was sent and refused. */
  const keyRejected = ref(false);
  /** The hosted edition's signed-in person, or null. */
  const account = ref<SessionView | null>(null);
  /** The hosted edition's session ended (or never began): the sign-in page is shown. */
  const signInNeeded = ref(false);

  const hosted = computed(() => edition.value === 'hosted');
  /** What "assigned to me" means: the signed-in person's e-mail, or the name typed in. */
  const identity = computed(() => account.value?.user.email ?? reviewerName.value);
  /** The name decisions carry: the server sets it from the signed-in person in the hosted edition. */
  const decidingAs = computed(() => account.value?.user.name ?? reviewerName.value);
  /** "Mine" of the signed-in person (hosted edition): their e-mail and their teams. */
  const me = computed(() => (account.value ? { email: account.value.user.email, teams: account.value.teams } : undefined));
  /** Self-hosted, before a first decision: no name typed, and never asked for one. */
  const needsReviewerName = computed(() => edition.value === 'self-hosted' && reviewerName.value === '' && !nameAsked.value);
  const canDecide = computed(() => account.value?.user.role !== 'viewer');
  const isAdmin = computed(() => account.value?.user.role === 'admin');

  function useKey(key: string): void {
    apiKey.value = key.trim();
    session.setItem(KEY_ITEM, apiKey.value);
    keyNeeded.value = false;
    keyRejected.value = false;
  }

  /** A request made with `keySent` was refused; answers about a key no longer in use are ignored. */
  function refused(keySent: string | null): void {
    if (hosted.value) {
      signedOut();
      return;
    }
    if (keySent !== apiKey.value) return;
    keyRejected.value = keySent !== null;
    keyNeeded.value = true;
    apiKey.value = null;
    session.removeItem(KEY_ITEM);
  }

  function signedIn(view: SessionView): void {
    account.value = view;
    signInNeeded.value = false;
  }

  /** A person as the console changed them: the signed-in person's own change (their role, their name) shows at once. */
  function personChanged(user: UserRecord): void {
    if (account.value?.user.id === user.id) account.value = { ...account.value, user };
  }

  function signedOut(): void {
    account.value = null;
    signInNeeded.value = true;
  }

  function setReviewerName(name: string): void {
    reviewerName.value = name.trim();
    local.setItem(REVIEWER_ITEM, reviewerName.value);
  }

  /** The reviewer was asked their name: whether they gave one or not, they are not asked again. */
  function reviewerNameAsked(): void {
    nameAsked.value = true;
    local.setItem(NAME_ASKED_ITEM, 'yes');
  }

  return {
    edition,
    hosted,
    apiKey,
    reviewerName,
    needsReviewerName,
    reviewerNameAsked,
    keyNeeded,
    keyRejected,
    account,
    signInNeeded,
    identity,
    me,
    decidingAs,
    canDecide,
    isAdmin,
    useKey,
    refused,
    signedIn,
    personChanged,
    signedOut,
    setReviewerName,
  };
});
