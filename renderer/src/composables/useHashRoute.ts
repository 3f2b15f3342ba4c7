import { onBeforeUnmount, ref, type Ref } from 'vue';

export const VIEWS = ['queue', 'history', 'statistics', 'console', 'invitation', 'reviews'] as const;
export type View = (typeof VIEWS)[number];

interface Route {
  view: View;
  /** What follows the view's name: a console section, an invitation's token, a review's id. */
  detail: string;
}

function routeOf(hash: string): Route {
  const [name = '', ...rest] = hash.replace(/^#\/?/, '').split('/');
  return (VIEWS as readonly string[]).includes(name) ? { view: name as View, detail: rest.join('/') } : { view: 'queue', detail: '' };
}

/** A review's address in the dashboard, as `links.dashboard` ends. */
export const reviewAddress = (id: number): string => `#/reviews/${id}`;

export interface HashRoute {
  view: Ref<View>;
  detail: Ref<string>;
  /**
   * Counts the address's changes, including those that land on the address the route already
   * shows: Back after two quick moves can return to it before the route saw the move away.
   */
  arrivals: Ref<number>;
  go: (view: View) => void;
  /**
   * Shows a review's address: a new entry of the browser's history (Back returns to the one
   * before), or, with `replace`, in place of the current one.
   */
  goToReview: (id: number, options?: { replace?: boolean }) => void;
}

/**
 * The current view from `#/queue`, `#/history`, `#/statistics`, `#/console/<section>`,
 * `#/invitation/<token>` or `#/reviews/<id>`, so views survive reloads and links. (An
 * invitation's token stays in the fragment: browsers never send it to a server.)
 */
export function useHashRoute(): HashRoute {
  const initial = routeOf(location.hash);
  const view = ref<View>(initial.view);
  const detail = ref(initial.detail);
  const arrivals = ref(0);
  // Reads the address as it is now, not the event's: events of quick moves arrive after later
  // moves, and only the present address is the one to show.
  const onChange = (): void => {
    const route = routeOf(location.hash);
    view.value = route.view;
    detail.value = route.detail;
    arrivals.value += 1;
  };
  window.addEventListener('hashchange', onChange);
  onBeforeUnmount(() => window.removeEventListener('hashchange', onChange));
  return {
    view,
    detail,
    arrivals,
    go: (next) => {
      location.hash = `#/${next}`;
    },
    goToReview: (id, { replace = false } = {}) => {
      const hash = reviewAddress(id);
      if (location.hash === hash) return;
      if (!replace) {
        location.hash = hash;
        return;
      }
      // Replacing fires no hashchange: the route follows here.
      history.replaceState(history.state, '', hash);
      onChange();
    },
  };
}
