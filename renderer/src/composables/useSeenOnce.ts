import { onBeforeUnmount, onMounted, type Ref, ref } from 'vue';

/** What a box may be clipped by: the viewport and every ancestor that scrolls or clips. */
function visibleArea(element: HTMLElement): { top: number; bottom: number; left: number; right: number } {
  const area = { top: 0, bottom: window.innerHeight, left: 0, right: window.innerWidth };
  for (let node = element.parentElement; node; node = node.parentElement) {
    const style = getComputedStyle(node);
    if (style.overflowX === 'visible' && style.overflowY === 'visible') continue;
    const box = node.getBoundingClientRect();
    area.top = Math.max(area.top, box.top);
    area.bottom = Math.min(area.bottom, box.bottom);
    area.left = Math.max(area.left, box.left);
    area.right = Math.min(area.right, box.right);
  }
  return area;
}

/** Rounding in layouts with fractional pixels. */
const SLACK_PX = 1;

/**
 * Whether `target` has been wholly on screen at least once: inside the viewport and the panes
 * that scroll it, and above `cover` (a sticky bar laid over the bottom of the pane). Checked
 * when mounted, on every scroll and resize, and when the browser reports the target's
 * visibility changed (a pane shown after being hidden). `reset` forgets it was seen.
 */
export function useSeenOnce(target: Ref<HTMLElement | null>, cover: () => HTMLElement | null | undefined): { seen: Ref<boolean>; check: () => void; reset: () => void } {
  const seen = ref(false);

  function check(): void {
    const element = target.value;
    if (seen.value || !element || element.getClientRects().length === 0) return;
    const box = element.getBoundingClientRect();
    const area = visibleArea(element);
    const coverTop = cover()?.getBoundingClientRect().top ?? Number.POSITIVE_INFINITY;
    const bottom = Math.min(area.bottom, coverTop);
    seen.value = box.top >= area.top - SLACK_PX && box.bottom <= bottom + SLACK_PX && box.left >= area.left - SLACK_PX && box.left <= area.right;
  }

  let observer: IntersectionObserver | undefined;
  onMounted(() => {
    check();
    observer = new IntersectionObserver(check, { threshold: [0, 1] });
    if (target.value) observer.observe(target.value);
    document.addEventListener('scroll', check, { capture: true, passive: true });
    window.addEventListener('resize', check);
  });
  onBeforeUnmount(() => {
    observer?.disconnect();
    document.removeEventListener('scroll', check, { capture: true });
    window.removeEventListener('resize', check);
  });

  return {
    seen,
    check,
    reset: () => {
      seen.value = false;
    },
  };
}
