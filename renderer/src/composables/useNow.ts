import { onScopeDispose, ref, type Ref } from 'vue';

const now = ref(Date.now());
let users = 0;
let timer: ReturnType<typeof setInterval> | undefined;

/** The current time, ticking once a second, shared by every component that shows an age. */
export function useNow(): Ref<number> {
  users += 1;
  timer ??= setInterval(() => (now.value = Date.now()), 1_000);
  onScopeDispose(() => {
    users -= 1;
    if (users === 0 && timer) {
      clearInterval(timer);
      timer = undefined;
    }
  });
  return now;
}
