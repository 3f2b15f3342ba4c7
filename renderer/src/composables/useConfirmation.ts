import { shallowRef, type Ref, type ShallowRef } from 'vue';

/** The part of the console's confirm dialog this needs: opening it. */
interface Openable {
  open(): void;
}

export interface Confirmation<T> {
  /** What the dialog asks about, while it is open. */
  chosen: ShallowRef<T | null>;
  ask(item: T): void;
  /** The dialog's `confirm` handler: acts on the item asked about. */
  confirmed(): Promise<void>;
}

/**
 * Something done to an item (revoking a key, deactivating a person) only once the person has
 * confirmed it in `dialog`.
 */
export function useConfirmation<T>(dialog: Ref<Openable | null>, act: (item: T) => Promise<void>): Confirmation<T> {
  const chosen = shallowRef<T | null>(null);
  return {
    chosen,
    ask: (item) => {
      chosen.value = item;
      dialog.value?.open();
    },
    confirmed: async () => {
      const item = chosen.value;
      if (item !== null) await act(item);
    },
  };
}
