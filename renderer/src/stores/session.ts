import { defineStore } from 'pinia';
import { ref } from 'vue';

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

/**
 * Who is reviewing and with which key. The key is kept for this browser session only; the
 * reviewer's name is remembered across sessions.
 */
export const useSessionStore = defineStore('session', () => {
  const session = storage('sessionStorage');
  const local = storage('localStorage');

  const apiKey = ref<string | null>(session.getItem(KEY_ITEM));
  const reviewerName = ref(local.getItem(REVIEWER_ITEM) ?? '');
  /** The API answered 401: the key prompt is shown. */
  const keyNeeded = ref(false);
  /** A key was sent and refused. */
  const keyRejected = ref(false);

  function useKey(key: string): void {
    apiKey.value = key.trim();
    session.setItem(KEY_ITEM, apiKey.value);
    keyNeeded.value = false;
    keyRejected.value = false;
  }

  /** A request made with `keySent` was refused; answers about a key no longer in use are ignored. */
  function refused(keySent: string | null): void {
    if (keySent !== apiKey.value) return;
    keyRejected.value = keySent !== null;
    keyNeeded.value = true;
    apiKey.value = null;
    session.removeItem(KEY_ITEM);
  }

  function setReviewerName(name: string): void {
    reviewerName.value = name.trim();
    local.setItem(REVIEWER_ITEM, reviewerName.value);
  }

  return { apiKey, reviewerName, keyNeeded, keyRejected, useKey, refused, setReviewerName };
});
