import { defineStore } from 'pinia';
import { computed, ref } from 'vue';
import { AlreadyDecidedError } from '../api/client';
import { useApi } from '../api';
import type { DecisionInput, DecisionRecord, DecisionType, ReviewFilters, ReviewRecord, ServiceEvents, VoteAnswer } from '../api/types';
import { revealPlain } from '../text/reveal';
import { explainFailure } from './failures';
import { pagedReviews } from './paged-reviews';
import { matchesFilters, placeInOrder } from './review-list';
import { useSessionStore } from './session';
import { decisionHold, UNDO_WINDOW_MS } from './undo-window';

const PAGE_SIZE = 100;

export type QueueFilters = Omit<ReviewFilters, 'decided'>;

export const DEFAULT_FILTERS: QueueFilters = { status: 'pending' };

/** How the reviewer orders the queue: the default (most urgent first while pending), or the agent that gives up soonest first. */
export type QueueSort = 'default' | 'waiting_until';

/** What became of a review the reviewer acted on, shown in place of the decision buttons. */
export type Outcome =
  | { kind: 'decided'; decision: DecisionRecord }
  | { kind: 'lost-race'; decision: DecisionRecord }
  | { kind: 'decided-elsewhere'; decision: DecisionRecord };

/** A decision taken here that the server has not answered yet: held for Undo, then being sent. */
export interface UnsentDecision {
  review: ReviewRecord;
  input: DecisionInput;
  /** When the hold ends and the decision is sent (ms since the epoch). */
  sendsAt: number;
  sending: boolean;
}

const PRESENT_PARTICIPLE: Record<DecisionType, string> = { approve: 'Approving', reject: 'Rejecting', modify: 'Approving with changes' };
const PAST_TENSE: Record<DecisionType, string> = { approve: 'Approved', reject: 'Rejected', modify: 'Approved with changes' };

/** "Approving review #12 (refund)": how the toasts and announcements name a decision. */
export function describeDecision(decision: DecisionType, review: ReviewRecord, tense: 'held' | 'sent'): string {
  return `${(tense === 'held' ? PRESENT_PARTICIPLE : PAST_TENSE)[decision]} review #${review.id} (${revealPlain(review.task_type, { oneLine: true })})`;
}

/**
 * The reviewer's queue: pending reviews (or another status, by filter), most urgent and
 * oldest first, loaded a page at a time and kept current by live events.
 */
export const useQueueStore = defineStore('queue', () => {
  const filters = ref<QueueFilters>({ ...DEFAULT_FILTERS });
  const sort = ref<QueueSort>('default');
  const order = computed(() => (sort.value === 'waiting_until' ? 'waiting_until' : filters.value.status === 'pending' ? 'priority' : 'newest'));
  const list = pagedReviews({
    read: (page) => useApi().listReviews({ ...filters.value, sort: order.value, page, page_size: PAGE_SIZE }),
    apply,
  });
  const { reviews, total, loading, error, hasMore } = list;
  const loaded = computed(() => list.pagesLoaded.value > 0);
  const selectedId = ref<number | null>(null);
  /** Reviews the reviewer was looking at when they were decided, by id. */
  const outcomes = ref<Record<number, { review: ReviewRecord; outcome: Outcome }>>({});
  /** By review id. Their reviews stay in `reviews` (the server still has them pending) but are not shown. */
  const unsent = ref<Record<number, UnsentDecision>>({});
  const holds = new Map<number, { cancel: () => void; end: () => void }>();
  const hold = decisionHold();
  /** A short confirmation of the last decision sent or undone. */
  const notice = ref<string | null>(null);
  /** What a screen reader is told: every hold, confirmation and undo. */
  const announcement = ref('');

  const shown = computed(() => reviews.value.filter((r) => !unsent.value[r.id]));
  /** Matching reviews, less those this reviewer has decided and the server not yet heard of. */
  const shownTotal = computed(() => total.value - (reviews.value.length - shown.value.length));
  const held = computed(() =>
    Object.values(unsent.value)
      .filter((decision) => !decision.sending)
      .sort((a, b) => a.sendsAt - b.sendsAt),
  );
  const filtersActive = computed(() => JSON.stringify(filters.value) !== JSON.stringify(DEFAULT_FILTERS));
  const selected = computed<ReviewRecord | null>(
    () => shown.value.find((r) => r.id === selectedId.value) ?? outcomes.value[selectedId.value ?? -1]?.review ?? null,
  );
  const selectedOutcome = computed(() => outcomes.value[selectedId.value ?? -1]?.outcome ?? null);

  function say(message: string, visible: boolean): void {
    announcement.value = message;
    if (visible) notice.value = message;
  }

  /** The reviewer stays on the review they look at while it is listed (or shows its outcome). */
  function keepSelectionOrFirst(): void {
    const id = selectedId.value;
    if (id !== null && (shown.value.some((r) => r.id === id) || outcomes.value[id])) return;
    selectedId.value = shown.value[0]?.id ?? null;
  }

  async function load(): Promise<void> {
    await list.load();
    keepSelectionOrFirst();
  }

  async function loadMore(): Promise<void> {
    await list.loadMore();
    keepSelectionOrFirst();
  }

  async function setFilters(next: QueueFilters): Promise<void> {
    filters.value = { ...next };
    await load();
  }

  const clearFilters = (): Promise<void> => setFilters(DEFAULT_FILTERS);

  async function setSort(next: QueueSort): Promise<void> {
    sort.value = next;
    await load();
  }

  function select(id: number | null): void {
    selectedId.value = id;
  }

  /** Shows one review (a notification was clicked), clearing filters that would hide it. */
  async function reveal(id: number): Promise<void> {
    const listed = (): boolean => shown.value.some((r) => r.id === id);
    if (!listed() && filtersActive.value) await clearFilters();
    await list.loadUntil(listed);
    selectedId.value = id;
  }

  function move(step: 1 | -1): void {
    const visible = shown.value;
    if (visible.length === 0) return;
    const index = visible.findIndex((r) => r.id === selectedId.value);
    const next = index < 0 ? 0 : Math.min(visible.length - 1, Math.max(0, index + step));
    selectedId.value = visible[next].id;
    if (step === 1 && next >= visible.length - 5) void loadMore();
  }

  function remove(id: number): void {
    const index = reviews.value.findIndex((r) => r.id === id);
    if (index < 0) return;
    reviews.value.splice(index, 1);
    total.value = Math.max(0, total.value - 1);
  }

  /** A newer version of a review in the list (a vote counted in its workflow). */
  function replace(review: ReviewRecord): void {
    const index = reviews.value.findIndex((r) => r.id === review.id);
    if (index >= 0) reviews.value[index] = review;
  }

  function receiveCreated(review: ReviewRecord): void {
    if (!matchesFilters(review, filters.value, useSessionStore().me) || reviews.value.some((r) => r.id === review.id)) return;
    placeInOrder(reviews.value, review, order.value, hasMore.value);
    total.value += 1;
    if (selectedId.value === null) selectedId.value = review.id;
  }

  function receiveDecided(review: ReviewRecord): void {
    if (holds.has(review.id)) return loseHeldRace(review);
    if (reviews.value.some((r) => r.id === review.id)) {
      // Decided by someone else while the reviewer may be looking at it.
      if (selectedId.value === review.id && !unsent.value[review.id]) {
        outcomes.value[review.id] = { review, outcome: { kind: 'decided-elsewhere', decision: review.decision! } };
      }
      remove(review.id);
    } else if (matchesFilters(review, filters.value, useSessionStore().me)) {
      placeInOrder(reviews.value, review, order.value, hasMore.value);
      total.value += 1;
    }
  }

  /**
   * An agent started or stopped waiting on a pending review: it may now belong to the list
   * (filtered on waiting) or not, and move (sorted by when agents give up).
   */
  function receiveWaiting(event: ReviewRecord): void {
    const index = reviews.value.findIndex((r) => r.id === event.id);
    // The event changes the wait alone; the rest of a listed review may be newer here (a vote).
    const review = index >= 0 ? { ...reviews.value[index], waiting_until: event.waiting_until } : event;
    const belongs = matchesFilters(review, filters.value, useSessionStore().me);
    if (index >= 0 && belongs && order.value !== 'waiting_until') {
      reviews.value[index] = review;
      return;
    }
    // Taken out where the total counted it (listed, or on a page not loaded when the filters ask
    // nothing of waits), so that whether more pages remain is judged without it, then put back.
    if (index >= 0) remove(review.id);
    else if (filters.value.waiting === undefined && belongs) total.value -= 1;
    if (belongs) {
      placeInOrder(reviews.value, review, order.value, hasMore.value);
      total.value += 1;
    }
    if (selectedId.value === null) selectedId.value = shown.value[0]?.id ?? null;
  }

  function apply<K extends keyof ServiceEvents>(type: K, payload: ServiceEvents[K]): void {
    if (type === 'review.created') receiveCreated(payload as ReviewRecord);
    if (type === 'review.decided') receiveDecided(payload as ReviewRecord);
    if (type === 'review.vote') replace(payload as ReviewRecord);
    if (type === 'review.waiting') receiveWaiting(payload as ReviewRecord);
  }

  /** Ends a hold without sending; returns its decision. */
  function endHold(id: number): UnsentDecision | undefined {
    const held = holds.get(id);
    const decision = unsent.value[id];
    if (!held || !decision) return undefined;
    held.cancel();
    holds.delete(id);
    delete unsent.value[id];
    held.end();
    return decision;
  }

  /**
   * The reviewer's decision: the review leaves the queue at once and the next one is
   * selected, but the decision is held for `UNDO_WINDOW_MS` before it is sent. Resolves once
   * it has been sent, undone or overtaken; rejects when the server refuses it, and the review
   * comes back with the reason.
   */
  function decide(id: number, input: DecisionInput): Promise<void> {
    const visible = shown.value;
    const index = visible.findIndex((r) => r.id === id);
    if (index < 0) return Promise.resolve();
    const review = visible[index];
    unsent.value[id] = { review, input, sendsAt: Date.now() + UNDO_WINDOW_MS, sending: false };
    if (selectedId.value === id) selectedId.value = shown.value[Math.min(index, shown.value.length - 1)]?.id ?? null;
    say(`${describeDecision(input.decision_type, review, 'held')} in ${UNDO_WINDOW_MS / 1000} seconds. Press u to undo.`, false);
    return new Promise<void>((resolve, reject) => {
      const cancel = hold.hold(() => {
        holds.delete(id);
        send(id).then(resolve, reject);
      }, UNDO_WINDOW_MS);
      holds.set(id, { cancel, end: resolve });
    });
  }

  /**
   * Sends a held decision. A lost race (409) is an outcome, shown with the decision that
   * stands, not an error.
   */
  async function send(id: number): Promise<void> {
    const { review, input } = unsent.value[id];
    unsent.value[id].sending = true;
    try {
      const answer = await useApi().decide(id, input);
      if ('workflow' in answer) {
        // A vote counted; the review waits for more and stays in the queue, showing the vote.
        replace(withVote(reviews.value.find((r) => r.id === id) ?? review, answer));
        say(`Your vote on review #${id} is counted: ${answer.workflow.approvals} of ${answer.workflow.required_approvals} approvals at this stage`, true);
        return;
      }
      remove(id);
      outcomes.value[id] = { review: decidedVersion(review, answer), outcome: { kind: 'decided', decision: answer } };
      say(describeDecision(answer.decision_type, review, 'sent'), true);
    } catch (failure) {
      if (!(failure instanceof AlreadyDecidedError)) {
        selectedId.value = id;
        error.value = explainFailure(failure);
        throw failure;
      }
      remove(id);
      outcomes.value[id] = { review: decidedVersion(review, failure.decision), outcome: { kind: 'lost-race', decision: failure.decision } };
      selectedId.value = id;
    } finally {
      delete unsent.value[id];
    }
  }

  /** Someone else decided a review whose decision is held here: nothing is sent. */
  function loseHeldRace(review: ReviewRecord): void {
    endHold(review.id);
    remove(review.id);
    outcomes.value[review.id] = { review, outcome: { kind: 'lost-race', decision: review.decision! } };
    selectedId.value = review.id;
  }

  /** Takes back a held decision (the latest one by default): the review is shown again, selected. */
  function undo(id: number | undefined = held.value.at(-1)?.review.id): void {
    if (id === undefined) return;
    const decision = endHold(id);
    if (!decision) return;
    selectedId.value = id;
    say(`Undone: review #${id} (${revealPlain(decision.review.task_type, { oneLine: true })}) is back in the queue`, true);
  }

  /**
   * The page is going away: every held decision is sent now, with a request that outlives the
   * page. Its answer cannot be shown; the decision is then on the server for every dashboard.
   */
  function sendHeldNow(): void {
    for (const { review, input } of held.value) {
      endHold(review.id);
      useApi().decideOutlivingPage(review.id, input);
      remove(review.id);
    }
  }

  function dismissOutcome(id: number): void {
    delete outcomes.value[id];
    if (selectedId.value === id) selectedId.value = shown.value[0]?.id ?? null;
  }

  return {
    reviews,
    shown,
    total,
    shownTotal,
    filters,
    filtersActive,
    loading,
    loaded,
    error,
    selectedId,
    selected,
    selectedOutcome,
    outcomes,
    unsent,
    held,
    notice,
    announcement,
    hasMore,
    order,
    sort,
    load,
    loadMore,
    setFilters,
    setSort,
    clearFilters,
    select,
    reveal,
    move,
    /** Applies a live event; the same events arrive for every reviewer's dashboard. */
    applyEvent: list.applyEvent,
    decide,
    undo,
    sendHeldNow,
    dismissOutcome,
  };
});

/**
 * The review as a counted vote leaves it. The live event of the vote brings the workflow's
 * whole progress, and may have come first: a version that already holds as many votes is kept.
 */
function withVote(review: ReviewRecord, answer: VoteAnswer): ReviewRecord {
  const workflow = review.workflow;
  if (!workflow || workflow.votes.length >= answer.votes.length) return review;
  const voters = new Set(answer.votes.map((vote) => vote.user_id));
  return {
    ...review,
    workflow: {
      ...workflow,
      votes: answer.votes,
      stage: answer.workflow.stage,
      stages: workflow.stages.map((stage, index) => (index === answer.workflow.stage ? { ...stage, approvals: answer.workflow.approvals } : stage)),
      waiting_on: workflow.waiting_on.filter((id) => !voters.has(id)),
    },
  };
}

function decidedVersion(review: ReviewRecord, decision: DecisionRecord): ReviewRecord {
  const status = ({ approve: 'approved', reject: 'rejected', modify: 'modified' } as const)[decision.decision_type];
  return { ...review, decision, status, decided_at: decision.created_at };
}
