import { onBeforeUnmount, ref, type Ref } from 'vue';

export const VIEWS = ['queue', 'history', 'statistics', 'console', 'invitation'] as const;
export type View = (typeof VIEWS)[number];

interface Route {
  view: View;
  /** What follows the view's name: a console section, an invitation's token. */
  detail: string;
}

function routeOf(hash: string): Route {
  const [name = '', ...rest] = hash.replace(/^#\/?/, '').split('/');
  return (VIEWS as readonly string[]).includes(name) ? { view: name as View, detail: rest.join('/') } : { view: 'queue', detail: '' };
}

/**
 * The current view from `#/queue`, `#/history`, `#/statistics`, `#/console/<section>` or
 * `#/invitation/<token>`, so views survive reloads and links. (An invitation's token stays in
 * the fragment: browsers never send it to a server.)
 */
export function useHashRoute(): { view: Ref<View>; detail: Ref<string>; go: (view: View) => void } {
  const initial = routeOf(location.hash);
  const view = ref<View>(initial.view);
  const detail = ref(initial.detail);
  const onChange = (): void => {
    const route = routeOf(location.hash);
    view.value = route.view;
    detail.value = route.detail;
  };
  window.addEventListener('hashchange', onChange);
  onBeforeUnmount(() => window.removeEventListener('hashchange', onChange));
  return {
    view,
    detail,
    go: (next) => {
      location.hash = `#/${next}`;
    },
  };
}
