// Files a review and waits for a person's decision: `node examples/request-review.js` after a
// build, with Greenlight running (`npm start` at the repository's root).
import { GreenlightClient } from '@greenlight/client';

const greenlight = new GreenlightClient({ baseUrl: process.env.GREENLIGHT_API_URL ?? 'http://127.0.0.1:8000', apiKey: process.env.GREENLIGHT_API_KEY });

const review = await greenlight.requestReview(
  {
    task_type: 'refund',
    proposed_action: 'Refund order 1042 in full (EUR 250.00)',
    agent_reasoning: 'The carrier confirmed the parcel is lost.',
    urgency: 'high',
    metadata: { order_id: 1042 },
  },
  {
    wait: 3600,
    onRetry: ({ reason }) => console.error(`still waiting (${reason})`),
    // Filed with the review in the same request: the reviewer sees the evidence with it.
    attachments: [{ name: 'carrier-note.txt', data: 'Parcel 1042 lost in transit, confirmed 2026-11-20.' }],
  },
);

if (review.status === 'pending') console.log(`No decision within the hour; review ${review.id} stays open.`);
else if (review.status === 'modified') console.log(`Do this instead: ${review.decision?.modified_action}`);
else console.log(`${review.status} by ${review.decision?.reviewer_name ?? 'a reviewer'}: ${review.decision?.notes ?? 'no notes'}`);
