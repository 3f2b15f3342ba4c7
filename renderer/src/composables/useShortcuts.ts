import { onBeforeUnmount, onMounted } from 'vue';

export type ShortcutMap = Record<string, (event: KeyboardEvent) => void>;

/**
 * Typing in a field, or a dialog being open, turns the single-key shortcuts off; Enter and
 * Space on a button or link keep their own meaning (that is how an armed decision is confirmed).
 */
function shortcutsBlocked(event: KeyboardEvent): boolean {
  if (event.ctrlKey || event.metaKey || event.altKey) return true;
  const target = event.target as HTMLElement | null;
  if (target?.closest('input, textarea, select, [contenteditable="true"]')) return true;
  if ((event.key === 'Enter' || event.key === ' ') && target?.closest('button, a, summary')) return true;
  return document.querySelector('dialog[open]') !== null;
}

/** Single-key shortcuts on the page, for as long as the component lives. */
export function useShortcuts(shortcuts: ShortcutMap): void {
  const onKey = (event: KeyboardEvent): void => {
    if (shortcutsBlocked(event)) return;
    const handler = shortcuts[event.key];
    if (!handler) return;
    event.preventDefault();
    handler(event);
  };
  onMounted(() => window.addEventListener('keydown', onKey));
  onBeforeUnmount(() => window.removeEventListener('keydown', onKey));
}
