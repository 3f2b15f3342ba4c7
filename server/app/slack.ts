import { type Config, publicUrlOf } from '../config/settings';
import type { AgentStore } from '../db/agent-store';
import type { ReviewStore } from '../db/review-store';
import { InstallationChatDeciders, OrganizationChatDeciders } from '../domain/chat/deciders';
import { ChatInteractions } from '../domain/chat/interactions';
import type { ChatProvider } from '../domain/chat/ports';
import type { ChatDestination } from '../domain/chat/messages';
import type { RoutingRuleRepository } from '../domain/routing/ports';
import { type Policy, slackChannelOfRule } from '../domain/routing/review-policy';
import type { ReviewCard } from '../domain/chat/records';
import type { ReviewUseCases } from '../domain/reviews/use-cases';
import { INSTALLATION } from '../domain/shared/principal';
import type { Log } from '../domain/shared/unit-of-work';
import type { SlackEventHandler } from '../integrations/slack/events';
import { type SlackAnswerer, SlackInbound } from '../integrations/slack/inbound';
import { SlackOAuth } from '../integrations/slack/oauth';
import { SecretBox } from '../system/secret-box';
import { ChatInstallations } from '../domain/chat/installations';
import type { ChatInstallationRepository, ChatPeople, ClaimedChatMessage } from '../domain/chat/ports';
import type { UnitOfWork } from '../domain/shared/unit-of-work';
import { SlackChatProvider } from '../integrations/slack/provider';
import { SlackWebApi } from '../integrations/slack/web-api';
import { SocketModeClient } from '../integrations/slack/socket-mode';
import { editionOf } from './edition';

/** What sends the messages the outbox holds: the provider for a message, and the review as it shows. */
export interface ChatMessaging {
  providerFor: (message: ClaimedChatMessage) => Promise<ChatProvider | null>;
  cardOf: (reviewId: number) => Promise<ReviewCard | null>;
  /** Socket Mode, with `slack_app_token`: started with the background work. */
  socket: SocketModeClient | null;
}

/** Slack as this installation uses it: the API it calls, and what handles what Slack sends. */
export interface SlackParts extends ChatMessaging {
  provider: ChatProvider;
  inbound: SlackInbound;
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

/** Organizations' Slack installs, with the app's credentials when the operator set them all. */
export function chatInstallationsOf(config: Config, store: ChatInstallationRepository, unitOfWork: UnitOfWork, clock: () => number, log: Log): ChatInstallations {
  const ready = config.slack_client_id !== '' && config.slack_client_secret !== '' && config.slack_token_key !== '';
  const oauth = ready
    ? new SlackOAuth({
        apiUrl: config.slack_api_url,
        authorizeUrl: config.slack_oauth_url,
        clientId: config.slack_client_id,
        clientSecret: config.slack_client_secret,
        // The dashboard forwards /api to this API: the installer's browser comes back through it.
        redirectUri: `${publicUrlOf(config)}/api/integrations/slack/oauth/callback`,
      })
    : null;
  return new ChatInstallations({ installations: store, oauth, sealer: ready ? new SecretBox(config.slack_token_key) : null, unitOfWork, log, clock });
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
    providerFor: async () => provider,
    cardOf: cardsOf(config, stores, reviews, true),
  };
}

/** A review as a message shows it: the record as it stands, its agent's name, its address in the dashboard. */
function cardsOf(config: Config, stores: { reviews: ReviewStore; agents: AgentStore }, reviews: ReviewUseCases, decidable: boolean): (reviewId: number) => Promise<ReviewCard | null> {
  const dashboardUrl = dashboardLinkOf(config);
  return async (reviewId) => {
    const found = await stores.reviews.findById(INSTALLATION, reviewId);
    if (found === null) return null;
    // Read as its organization reads it: with a workflow's votes.
    const review = found.organization_id === null ? found : await reviews.reading.get({ organizationId: found.organization_id }, reviewId);
    // The name the review was filed under (a registered agent's, or the one the agent gave); a registered agent's now, for reviews filed before names were kept.
    const agent = review.agent_name === null && review.agent_id !== null && review.organization_id !== null ? await stores.agents.find(review.organization_id, review.agent_id) : null;
    return { review, agent_name: review.agent_name ?? agent?.name ?? null, dashboard_url: review.links?.dashboard ?? dashboardUrl(review.id), decidable };
  };
}

/**
 * The hosted edition's messages, once the operator set the Slack app's credentials: each
 * organization's reviews go to its installed workspace's channel, with its own bot token.
 */
export function hostedSlackMessaging(config: Config, stores: { reviews: ReviewStore; agents: AgentStore }, reviews: ReviewUseCases, installations: ChatInstallations): ChatMessaging | null {
  if (!editionOf(config).organizations || config.slack_token_key === '') return null;
  return {
    providerFor: async (message) => {
      if (message.organization_id === null) return null;
      const posting = await installations.postingFor(message.organization_id);
      return posting && new SlackChatProvider(new SlackWebApi(config.slack_api_url, () => posting.token));
    },
    cardOf: cardsOf(config, stores, reviews, true),
    socket: null,
  };
}

/**
 * The hosted edition's clicks: the review the click is about names the organization; its
 * installation must be of the workspace the click came from; the person is found among that
 * organization's people, and decides as themselves.
 */
export function hostedSlackInbound(
  config: Config,
  stores: { reviews: ReviewStore; slackInstallations: ChatPeople },
  reviews: ReviewUseCases,
  installations: ChatInstallations,
  log: Log,
): SlackAnswerer | null {
  if (!editionOf(config).organizations || config.slack_token_key === '') return null;
  const parser = new SlackChatProvider(new SlackWebApi(config.slack_api_url, () => ''));
  const dashboardUrl = dashboardLinkOf(config);
  return {
    answer: async (payload) => {
      const interaction = parser.parseInteraction(payload);
      if (interaction.kind === 'ignored') return null;
      const review = await stores.reviews.findById(INSTALLATION, interaction.review_id);
      const access = review?.organization_id ? await installations.accessFor(review.organization_id) : null;
      if (!review?.organization_id || !access || access.team_id !== interaction.user.team_id) {
        log.info('ignored a Slack interaction no installation of its workspace covers', { review_id: interaction.review_id, team_id: interaction.user.team_id });
        return null;
      }
      const provider = new SlackChatProvider(new SlackWebApi(config.slack_api_url, () => access.token));
      const interactions = new ChatInteractions({
        provider,
        deciders: new OrganizationChatDeciders(review.organization_id, stores.slackInstallations, provider),
        decideAs: (principal, reviewId, input) => reviews.deciding.decideAs(principal, reviewId, input),
        review: (scope, reviewId) => reviews.reading.get(scope, reviewId),
        dashboardUrl,
        log,
      });
      return new SlackInbound(provider, interactions, log).answer(payload);
    },
  };
}

/**
 * Hosted, with the organization's installation active: the channel of the routing rule that
 * routed the review (`slack_channel_id`), else the installation's. Read by the rule's name in the
 * create's transaction; a shadow rule's or an audit sample's mark routes nothing, so names no
 * rule. A message stays in the channel it was posted to when its rule changes later.
 */
export function hostedSlackDestinationOf(config: Config, installations: ChatInstallationRepository, rules: Pick<RoutingRuleRepository, 'slackChannelOf'>): ChatDestination | null {
  if (!editionOf(config).organizations || config.slack_token_key === '') return null;
  return async (tx, review) => {
    if (review.organization_id === null) return null;
    const installation = await installations.find(review.organization_id, tx);
    if (installation?.status !== 'active') return null;
    const ruleChannel = review.routing_rule === null ? null : await rules.slackChannelOf(tx, review.organization_id, review.routing_rule);
    return ruleChannel ?? installation.channel_id;
  };
}

/** Hosted: Slack's word that a workspace removed the app or its tokens marks the installations revoked. */
export function hostedSlackEvents(installations: ChatInstallations): SlackEventHandler {
  return async (event) => {
    if ((event.type === 'app_uninstalled' || event.type === 'tokens_revoked') && event.team_id) await installations.revokedBySlack(event.team_id);
  };
}
