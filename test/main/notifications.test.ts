import { afterEach, describe, expect, it } from 'vitest';
import type { ReviewRecord } from '../../server';
import { type Announcement, BurstCoalescer, createReviewNotifier, notificationContent, notifications, shouldAnnounce } from '../../main/modules/notifications';
import { type DesktopOnFakes, desktopOnFakes } from '../support/electron-fakes';

/** Timers the test advances by hand. */
function manualTimers() {
  let pending: Array<{ at: number; callback: () => void; handle: number }> = [];
  let now = 0;
  let next = 1;
  return {
    setTimeout: (callback: () => void, ms: number) => {
      pending.push({ at: now + ms, callback, handle: next });
      return next++;
    },
    clearTimeout: (handle: unknown) => {
      pending = pending.filter((t) => t.handle !== handle);
    },
    advance(ms: number) {
      now += ms;
      for (const timer of pending.filter((t) => t.at <= now)) {
        pending = pending.filter((t) => t !== timer);
        timer.callback();
      }
    },
    get count() {
      return pending.length;
    },
  };
}

let nextId = 1;
const review = (urgency: ReviewRecord['urgency'], extra: Partial<ReviewRecord> = {}): ReviewRecord =>
  ({ id: nextId++, urgency, status: 'pending', task_type: 'refund', proposed_action: 'Refund order 1042 in full', agent_id: 7, framework: 'langchain', ...extra }) as ReviewRecord;

describe('BurstCoalescer', () => {
  it('announces the first review at once and a burst as one count when the quiet period ends', () => {
    const timers = manualTimers();
    const announced: Announcement[] = [];
    const coalescer = new BurstCoalescer((a) => announced.push(a), timers, 10_000);

    const first = review('critical');
    coalescer.add(first);
    for (let i = 0; i < 5; i++) coalescer.add(review('critical'));
    expect(announced).toEqual([{ kind: 'review', review: first }]);

    timers.advance(10_000);
    expect(announced).toEqual([{ kind: 'review', review: first }, { kind: 'burst', count: 5 }]);
    timers.advance(10_000);
    expect(announced).toHaveLength(2);
    expect(timers.count).toBe(0);
  });

  it('names a single late review instead of counting it', () => {
    const timers = manualTimers();
    const announced: Announcement[] = [];
    const coalescer = new BurstCoalescer((a) => announced.push(a), timers, 10_000);
    coalescer.add(review('critical'));
    const second = review('critical');
    coalescer.add(second);
    timers.advance(10_000);
    expect(announced[1]).toEqual({ kind: 'review', review: second });
  });

  it('announces at once again after a quiet period without reviews', () => {
    const timers = manualTimers();
    const announced: Announcement[] = [];
    const coalescer = new BurstCoalescer((a) => announced.push(a), timers, 10_000);
    coalescer.add(review('critical'));
    timers.advance(10_000);
    const later = review('critical');
    coalescer.add(later);
    expect(announced).toEqual([expect.objectContaining({ kind: 'review' }), { kind: 'review', review: later }]);
  });

  it('drops what it holds on dispose', () => {
    const timers = manualTimers();
    const announced: Announcement[] = [];
    const coalescer = new BurstCoalescer((a) => announced.push(a), timers, 10_000);
    coalescer.add(review('critical'));
    coalescer.add(review('critical'));
    coalescer.dispose();
    timers.advance(60_000);
    expect(announced).toHaveLength(1);
    expect(timers.count).toBe(0);
  });
});

describe('which reviews are announced', () => {
  it.each([
    ['critical', 'critical', true],
    ['critical', 'high', false],
    ['critical_and_high', 'high', true],
    ['critical_and_high', 'medium', false],
    ['off', 'critical', false],
  ] as const)('with the setting %s, a %s review: %s', (level, urgency, expected) => {
    expect(shouldAnnounce(review(urgency), level)).toBe(expected);
  });

  it('does not announce a critical review that a routing rule decided on arrival', () => {
    expect(shouldAnnounce(review('critical', { status: 'approved', routing_rule: 'auto' }), 'critical')).toBe(false);
  });
});

describe('notificationContent', () => {
  it('names the task type, the start of the action and the agent', () => {
    const content = notificationContent({ kind: 'review', review: review('critical', { proposed_action: `Drop table ${'x'.repeat(300)}` }) });
    expect(content.title).toBe('Critical review: refund');
    expect(content.body).toMatch(/^Drop table x+…\nfrom agent 7$/);
    expect(content.body.split('\n')[0]).toHaveLength(120);
  });

  it('counts a burst', () => {
    expect(notificationContent({ kind: 'burst', count: 5 })).toEqual({ title: '5 urgent reviews waiting', body: 'Open Greenlight to review them.' });
  });
});

describe('createReviewNotifier', () => {
  function setup(level: 'off' | 'critical' | 'critical_and_high' = 'critical') {
    const timers = manualTimers();
    const shown: Array<{ title: string; body: string; click: () => void }> = [];
    const clicked: Array<number | null> = [];
    const notifier = createReviewNotifier({
      createNotification: (content) => {
        const entry = { ...content, click: () => {} };
        return {
          on: (_event: 'click', listener: () => void) => (entry.click = listener),
          show: () => shown.push(entry),
        };
      },
      level: () => level,
      onClick: (id) => clicked.push(id),
      timers,
      quietMs: 10_000,
    });
    return { notifier, timers, shown, clicked };
  }

  it('shows one notification per new critical review, and a click opens that review', () => {
    const { notifier, shown, clicked } = setup();
    const urgent = review('critical');
    notifier.reviewCreated(review('medium'));
    notifier.reviewCreated(urgent);
    expect(shown.map((n) => n.title)).toEqual(['Critical review: refund']);
    shown[0].click();
    expect(clicked).toEqual([urgent.id]);
  });

  it('coalesces a burst, and a click on the summary opens the queue', () => {
    const { notifier, timers, shown, clicked } = setup();
    for (let i = 0; i < 6; i++) notifier.reviewCreated(review('critical'));
    timers.advance(10_000);
    expect(shown.map((n) => n.title)).toEqual(['Critical review: refund', '5 urgent reviews waiting']);
    shown[1].click();
    expect(clicked).toEqual([null]);
  });

  it('stays silent when turned off, and includes high urgency when asked', () => {
    const off = setup('off');
    off.notifier.reviewCreated(review('critical'));
    expect(off.shown).toEqual([]);
    const high = setup('critical_and_high');
    high.notifier.reviewCreated(review('high'));
    expect(high.shown.map((n) => n.title)).toEqual(['High-urgency review: refund']);
  });
});

describe('the notifications module', () => {
  let desktop: DesktopOnFakes;
  afterEach(() => desktop.close());

  async function enabled(options: { notificationsSupported?: boolean } = {}) {
    desktop = await desktopOnFakes(options);
    await desktop.enable(notifications);
    const requested: Array<number | null> = [];
    desktop.ctx.events.on('window.requested', ({ reviewId }) => requested.push(reviewId));
    return { ...desktop, requested };
  }

  it('a critical review raises a notification whose click asks for the window on that review', async () => {
    const { ctx, electron, requested } = await enabled();
    const urgent = review('critical');
    ctx.events.emit('review.created', review('medium'));
    ctx.events.emit('review.created', urgent);
    expect(electron.shownNotifications.map((n) => n.content)).toEqual([
      { title: 'Critical review: refund', body: expect.stringContaining('Refund order 1042'), icon: ctx.files.icon },
    ]);
    electron.shownNotifications[0].click();
    expect(requested).toEqual([urgent.id]);
  });

  it('follows the setting as it is changed', async () => {
    const { ctx, electron } = await enabled();
    await ctx.settings.update({ notifications: 'off' });
    ctx.events.emit('review.created', review('critical'));
    await ctx.settings.update({ notifications: 'critical_and_high' });
    ctx.events.emit('review.created', review('high'));
    expect(electron.shownNotifications.map((n) => n.content.title)).toEqual(['High-urgency review: refund']);
  });

  it('stays silent where the system cannot show notifications', async () => {
    const { ctx, electron } = await enabled({ notificationsSupported: false });
    ctx.events.emit('review.created', review('critical'));
    expect(electron.shownNotifications).toEqual([]);
  });
});
