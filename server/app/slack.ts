import { type Config, publicUrlOf } from '../config/settings';
import type { AgentStore } from '../db/agent-store';
import type { ReviewStore } from '../db/review-store';
import { InstallationChatDeciders } from '../domain/chat/deciders';
import { ChatInteractions } from '../domain/chat/interactions';
import type { ChatProvider } from '../domain/chat/ports';
import type { ChatDestination } from '../domain/chat/messages';
import { type Policy, slackChannelOfRule } from '../domain/routing/review-policy';
import type { ReviewCard } from '../domain/chat/records';
import type { ReviewUseCases } from '../domain/reviews/use-cases';
import { INSTALLATION } from '../domain/shared/principal';
import type { Log } from '../domain/shared/unit-of-work';
import type { SlackEventHandler } from '../integrations/slack/events';
import { SlackInbound } from '../integrations/slack/inbound';
import { SlackChatProvider } from '../integrations/slack/provider';
import { SlackWebApi } from '../integrations/slack/web-api';
import { SocketModeClient } from '../integrations/slack/socket-mode';
import { editionOf } from './edition';

/** Slack as this installation uses it: the API it calls, and what handles what Slack sends. */
export interface SlackParts {
  provider: ChatProvider;
  inbound: SlackInbound;
  /** A review as its message shows it. */
  cardOf: (reviewId: number) => Promise<ReviewCard | null>;
  /** Socket Mode, with `slack_app_token`: started with the background work. */
  socket: SocketModeClient | null;
  /** What Slack's events do here (HTTP or Socket Mode). */
  onEvent: SlackEventHandler;
}

/** Self-hosted: the app's tokens are settings; an uninstall shows as their calls failing, logged by the dispatcher. */
function installationEvents(log: Log): SlackEventHandler {
  return async (event) => {
    if (event.type === 'app_uninstalled' || event.type === 'tokens_revoked') log.error('the Slack app was uninstalled or its tokens revoked: set new slack_bot_token and slack_app_token', { type: event.type, team_id: event.team_id });
  };
}

/**
 * Where a new review is posted, when a bot token can post (self-hosted): the channel of the
 * routing rule that routed it (`slack_channel_id`), else `slack_channel`, else nowhere. Read
 * at each review, so a reloaded policy's channels apply to the next one.
 */
export function slackDestinationOf(config: Config, policy: () => Policy): ChatDestination | null {
  if (!slackOf(config)) return null;
  return async (_tx, review) => slackChannelOfRule(policy(), review.routing_rule) ?? (config.slack_channel || null);
}

function slackOf(config: Config): boolean {
  return !editionOf(config).organizations && config.slack_bot_token !== '';
}

/** The review in the dashboard (`#/reviews/{id}`). */
export function dashboardLinkOf(config: Config): (reviewId: number) => string {
  const dashboard = publicUrlOf(config);
  return (reviewId) => `${dashboard}/#/reviews/${reviewId}`;
}

/** The self-hosted installation's Slack app, when `slack_bot_token` is set; null otherwise. */
export function slackParts(config: Config, stores: { reviews: ReviewStore; agents: AgentStore }, reviews: ReviewUseCases, log: Log): SlackParts | null {
  if (!slackOf(config)) return null;
  const provider = new SlackChatProvider(new SlackWebApi(config.slack_api_url, () => config.slack_bot_token));
  const dashboardUrl = dashboardLinkOf(config);
  const interactions = new ChatInteractions({
    provider,
    deciders: new InstallationChatDeciders(provider),
    decideAs: (principal, reviewId, input) => reviews.deciding.decideAs(principal, reviewId, input),
    review: (scope, reviewId) => reviews.reading.get(scope, reviewId),
    dashboardUrl,
    log,
  });
  const inbound = new SlackInbound(provider, interactions, log);
  const onEvent = installationEvents(log);
  return {
    provider,
    inbound,
    onEvent,
    socket: config.slack_app_token ? new SocketModeClient({ api: new SlackWebApi(config.slack_api_url, () => config.slack_app_token), inbound, onEvent, log }) : null,
    cardOf: async (reviewId) => {
      const review = await stores.reviews.findById(INSTALLATION, reviewId);
      if (review === null) return null;
      const agent = review.agent_id !== null && review.organization_id !== null ? await stores.agents.find(review.organization_id, review.agent_id) : null;
      return { review, agent_name: agent?.name ?? null, dashboard_url: dashboardUrl(review.id) };
    },
  };
}
