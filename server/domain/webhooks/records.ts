/** Webhook endpoints and their deliveries. */

/** An endpoint of the self-hosted installation, as the `webhooks` setting names it. */
export interface ConfiguredWebhook {
  url: string;
  secret: string;
  events: string[];
}

export interface WebhookFields {
  url: string;
  events: string[];
  description: string | null;
  is_active: boolean;
}

/** An organization's webhook endpoint (hosted edition); its secret is shown only when made. */
export interface WebhookRecord {
  id: number;
  organization_id: number;
  url: string;
  /** The event types it receives. */
  events: string[];
  description: string | null;
  is_active: boolean;
  /** Why delivery stopped (a 410, the retry schedule spent), when it did. */
  disabled_reason: string | null;
  created_at: string;
  updated_at: string;
}

/** One event's delivery to one endpoint, with its attempts so far. */
export interface WebhookDeliveryRecord {
  id: number;
  webhook_id: number;
  /** The `webhook-id` header, the same on every attempt. */
  message_id: string;
  event_type: string;
  /** pending (to be sent, or retried), delivered, or failed (the schedule spent, or the endpoint disabled). */
  status: 'pending' | 'delivered' | 'failed';
  attempts: number;
  next_attempt_at: string | null;
  last_attempt_at: string | null;
  last_status_code: number | null;
  last_error: string | null;
  duration_ms: number | null;
  created_at: string;
}
