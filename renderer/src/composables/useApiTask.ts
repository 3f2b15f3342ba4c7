import { computed, reactive, ref } from 'vue';
import { explainFailure } from '../stores/failures';

export interface ApiTask {
  /** A run is under way. */
  readonly busy: boolean;
  /** Why the last run failed, in the API's words; null once a run succeeds. */
  readonly error: string | null;
  /** Runs `work`; whether it succeeded. */
  run(work: () => Promise<void>): Promise<boolean>;
}

/**
 * One kind of request a console page makes (its load, a form's submit, the actions of its
 * rows): whether it is under way, to disable what would start it again, and why it last failed.
 * Reactive as a whole, so that a template reads `task.busy` without unwrapping.
 */
export function useApiTask(): ApiTask {
  const running = ref(0);
  const error = ref<string | null>(null);

  async function run(work: () => Promise<void>): Promise<boolean> {
    running.value += 1;
    error.value = null;
    try {
      await work();
      return true;
    } catch (failure) {
      error.value = explainFailure(failure);
      return false;
    } finally {
      running.value -= 1;
    }
  }

  return reactive({ busy: computed(() => running.value > 0), error, run });
}
