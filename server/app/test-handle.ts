import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Sequelize } from 'sequelize';
import type { Config } from '../config/settings';
import { NONE_FROM_ELSEWHERE, type PublishedEvent } from '../domain/shared/events';
import type { AttachmentService } from '../domain/reviews/attachments';
import type { FeedbackService } from '../domain/reviews/feedback';
import type { Principal } from '../domain/shared/principal';
import type { StatisticsService } from '../domain/reviews/statistics';
import type { ReviewUseCases } from '../domain/reviews/use-cases';
import { launchApi, type RunningServer, type StartOptions } from './api-server';

/**
 * What the tests may look at inside a running API, beside its HTTP interface: the counts that
 * show nothing was left behind, the database for a test's own queries, and the use cases for a
 * test that calls them as a route would.
 */
export interface TestHandle {
  /** Requests (blocking creates, long-polls, MCP calls) waiting for a decision in this process. */
  waitingCount(): number;
  /** Live event streams open. */
  openStreams(): number;
  /** Serves a live event stream to `principal`, as GET /events would once it had authenticated them. */
  attachStream(req: IncomingMessage, res: ServerResponse, principal: Principal): Promise<void>;
  /** Ends every live event stream, as a shutdown would, leaving the server running. */
  closeStreams(): void;
  /** MCP sessions open. */
  mcpSessions(): number;
  /** Listeners of the event feed: a stream or a waiter left behind shows here. */
  feedListeners(): number;
  /**
   * Records what reaches the feed without asking for other processes' events, so what this
   * process reads of them is what the rest of it asks for.
   */
  observeFeed(): { events: PublishedEvent[]; stop(): void };
  sequelize: Sequelize;
  dialect: 'sqlite' | 'postgres';
  reviews: ReviewUseCases;
  feedback: FeedbackService;
  attachments: AttachmentService;
  statistics: StatisticsService;
  /** Looks for due webhook deliveries now (a test that moved the clock). */
  wakeWebhooks(): void;
  /** Runs the scheduled evaluation suites due now, as the process's own timer would; resolves once they have run. */
  runDueEvaluations(): Promise<void>;
  /** Looks for messages owed to Slack now. */
  wakeChat(): void;
}

export async function startServerUnderTest(config: Config, options: StartOptions = {}): Promise<RunningServer & { test: TestHandle }> {
  const { running, services, eventStreams, mcpSessions } = await launchApi(config, options);
  return {
    ...running,
    test: {
      waitingCount: () => services.waiters.count,
      openStreams: () => eventStreams.count,
      attachStream: (req, res, principal) => eventStreams.attach(req, res, principal),
      closeStreams: () => eventStreams.closeAll(),
      mcpSessions: () => mcpSessions.size,
      feedListeners: () => services.feed.listenerCount,
      observeFeed: () => {
        const events: PublishedEvent[] = [];
        return { events, stop: services.feed.subscribe((event) => void events.push(event), NONE_FROM_ELSEWHERE) };
      },
      sequelize: services.db.sequelize,
      dialect: services.db.sql.name,
      reviews: services.reviews,
      feedback: services.feedback,
      attachments: services.attachments,
      statistics: services.statistics,
      wakeWebhooks: () => services.background.wakeWebhooks(),
      runDueEvaluations: () => services.background.runDueEvaluations(),
      wakeChat: () => services.background.wakeChat(),
    },
  };
}
