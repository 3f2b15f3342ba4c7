/** One of Slack's Events API deliveries, from either transport: the event's type, its workspace, the event itself. */
export type SlackEventHandler = (event: { type: string; team_id: string | null; payload: Record<string, unknown> }) => Promise<void>;
