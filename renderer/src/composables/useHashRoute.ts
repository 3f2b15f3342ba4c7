import { onBeforeUnmount, ref, type Ref } from 'vue';

export const VIEWS = ['queue', 'history', 'statistics'] as const;
export type View = (typeof VIEWS)[number];

function viewOf(hash: string): View {
  const name = hash.replace(/^#\/?/, '').split('/')[0];
  return (VIEWS as readonly string[]).includes(name) ? (name as View) : 'queue';
}

/** The current view from `#/queue`, `#/history` or `#/statistics`, so views survive reloads and links. */
export function useHashRoute(): { view: Ref<View>; go: (view: View) => void } {
  const view = ref<View>(viewOf(location.hash));
  const onChange = (): void => {
    view.value = viewOf(location.hash);
  };
  window.addEventListener('hashchange', onChange);
  onBeforeUnmount(() => window.removeEventListener('hashchange', onChange));
  return {
    view,
    go: (next) => {
      location.hash = `#/${next}`;
    },
  };
}
