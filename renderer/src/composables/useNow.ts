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

export function formatAge(fromIso: string, nowMs: number): string {
  const seconds = Math.max(0, Math.floor((nowMs - Date.parse(fromIso)) / 1000));
  if (seconds < 60) return `${seconds}s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 60) return `${minutes}m`;
  const hours = Math.floor(minutes / 60);
  if (hours < 48) return `${hours}h ${minutes % 60}m`;
  return `${Math.floor(hours / 24)}d`;
}

/** Time left until `untilIso`, in the same short form as an age. */
export function formatTimeLeft(untilIso: string, nowMs: number): string {
  const untilMs = Date.parse(untilIso);
  return untilMs <= nowMs ? 'expiring now' : `${formatAge(new Date(nowMs).toISOString(), untilMs)} left`;
}

export function formatDuration(seconds: number | null): string {
  if (seconds === null) return '—';
  if (seconds < 60) return `${Math.round(seconds)} s`;
  if (seconds < 3600) return `${Math.round(seconds / 60)} min`;
  return `${(seconds / 3600).toFixed(1)} h`;
}
