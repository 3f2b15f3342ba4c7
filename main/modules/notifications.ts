import { oneLine, type ReviewRecord } from '../../server';
import type { NotificationLevel } from '../bridge';
import type { DesktopModule } from './desktop-module';
import type { NotificationLike } from './electron-parts';

/** What the person is told: one review, or how many arrived in a burst. */
export type Announcement = { kind: 'review'; review: ReviewRecord } | { kind: 'burst'; count: number };

export interface Timers {
  setTimeout(callback: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

/**
 * Coalesces bursts. The first review of a quiet period is announced at once; reviews arriving
 * within `quietMs` of an announcement are counted, and when the period ends one announcement
 * says how many arrived (or names the review, if it was only one).
 */
export class BurstCoalescer {
  private held: ReviewRecord[] = [];
  private timer: unknown = null;

  constructor(
    private readonly announce: (announcement: Announcement) => void,
    private readonly timers: Timers,
    private readonly quietMs = 10_000,
  ) {}

  add(review: ReviewRecord): void {
    if (this.timer === null) {
      this.announce({ kind: 'review', review });
      this.startQuietPeriod();
      return;
    }
    this.held.push(review);
  }

  /** Drops anything still held (the app is quitting). */
  dispose(): void {
    if (this.timer !== null) this.timers.clearTimeout(this.timer);
    this.timer = null;
    this.held = [];
  }

  private startQuietPeriod(): void {
    this.timer = this.timers.setTimeout(() => this.endQuietPeriod(), this.quietMs);
  }

  private endQuietPeriod(): void {
    this.timer = null;
    const held = this.held;
    this.held = [];
    if (held.length === 0) return;
    this.announce(held.length === 1 ? { kind: 'review', review: held[0] } : { kind: 'burst', count: held.length });
    this.startQuietPeriod();
  }
}

export function shouldAnnounce(review: ReviewRecord, level: NotificationLevel): boolean {
  // Decided on arrival by a routing rule: nobody needs to look.
  if (level === 'off' || review.status !== 'pending') return false;
  return review.urgency === 'critical' || (level === 'critical_and_high' && review.urgency === 'high');
}

export function notificationContent(announcement: Announcement): { title: string; body: string } {
  if (announcement.kind === 'burst') {
    return { title: `${announcement.count} urgent reviews waiting`, body: 'Open Greenlight to review them.' };
  }
  const { review } = announcement;
  const agent = review.agent_id !== null ? `agent ${review.agent_id}` : (review.framework ?? 'an agent');
  return {
    title: `${review.urgency === 'critical' ? 'Critical' : 'High-urgency'} review: ${review.task_type}`,
    body: `${oneLine(review.proposed_action, 120)}\nfrom ${agent}`,
  };
}

export interface ReviewNotifierOptions {
  createNotification(content: { title: string; body: string }): NotificationLike;
  level(): NotificationLevel;
  /** A click: open this review, or the queue when the announcement was a burst. */
  onClick(reviewId: number | null): void;
  timers: Timers;
  quietMs?: number;
}

/**
 * Native notifications for new urgent reviews: filtered by the person's setting, bursts
 * coalesced, and each click routed back to the window.
 */
export function createReviewNotifier(options: ReviewNotifierOptions): { reviewCreated(review: ReviewRecord): void; dispose(): void } {
  const coalescer = new BurstCoalescer(
    (announcement) => {
      const notification = options.createNotification(notificationContent(announcement));
      notification.on('click', () => options.onClick(announcement.kind === 'review' ? announcement.review.id : null));
      notification.show();
    },
    options.timers,
    options.quietMs,
  );
  return {
    reviewCreated: (review) => {
      if (shouldAnnounce(review, options.level())) coalescer.add(review);
    },
    dispose: () => coalescer.dispose(),
  };
}

/** Announces new urgent reviews from the running API; a click brings the window forward on the review. */
export const notifications: DesktopModule = {
  enable({ electron: { Notification }, files, settings, events, lifecycle }) {
    const notifier = createReviewNotifier({
      createNotification: (content) => new Notification({ ...content, icon: files.icon }),
      level: () => (Notification.isSupported() ? settings.current.notifications : 'off'),
      onClick: (reviewId) => events.emit('window.requested', { reviewId }),
      timers: { setTimeout, clearTimeout: (handle) => clearTimeout(handle as NodeJS.Timeout) },
    });
    events.on('review.created', (review) => notifier.reviewCreated(review));
    lifecycle.onQuit(() => notifier.dispose());
  },
};
