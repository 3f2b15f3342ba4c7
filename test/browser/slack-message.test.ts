import path from 'node:path';
import type { Browser } from 'playwright';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { reviewMessage } from '../../server/integrations/slack/blocks';
import { launchChromium } from '../support/browser';
import { slackMessagePage } from '../support/block-kit-mock';
import { pendingReview } from '../support/records';

/**
 * The screenshots of a review in Slack for docs/slack.md: the Block Kit Greenlight sends,
 * drawn by an HTML mock of Slack's layout (Slack itself cannot run here).
 */
let browser: Browser;
beforeAll(async () => {
  browser = await launchChromium();
});
afterAll(() => browser.close());

const screenshots = path.join(__dirname, '..', '..', 'docs', 'screenshots');

const review = pendingReview({
  id: 418,
  task_type: 'refund',
  proposed_action: 'stripe refunds create --charge ch_3Pq2 --amount 24900 --reason requested_by_customer\n# order 1042: duplicate charge, customer wrote in twice',
  confidence_score: 0.72,
  urgency: 'high',
  expires_at: '2026-11-26T11:04:00.000Z',
  created_at: '2026-11-26T10:04:00.000Z',
});

describe('a review in Slack, drawn from the Block Kit Greenlight sends', () => {
  it('pending: the facts, the action as code, the four buttons', async () => {
    const page = await browser.newPage({ viewport: { width: 700, height: 480 } });
    const { blocks } = reviewMessage({ review, agent_name: 'billing-agent', dashboard_url: 'https://review.example.com/#/reviews/418', decidable: true });
    await page.setContent(slackMessagePage(blocks));
    expect(await page.locator('.button').allTextContents()).toEqual(['Approve', 'Reject', 'Modify…', 'Open']);
    await page.locator('.message').screenshot({ path: path.join(screenshots, 'slack-message.png') });
    await page.close();
  });

  it('decided: the buttons gone but Open, the outcome, by whom, when, and why', async () => {
    const page = await browser.newPage({ viewport: { width: 700, height: 480 } });
    const decided = {
      ...review,
      status: 'rejected' as const,
      decided_at: '2026-11-26T10:09:00.000Z',
      decision: { id: 77, review_id: 418, decision_type: 'reject' as const, reviewer_id: 3, reviewer_name: 'ana@example.com', modified_action: null, notes: 'Already refunded by hand this morning.', created_at: '2026-11-26T10:09:00.000Z', receipt: null },
    };
    const { blocks } = reviewMessage({ review: decided, agent_name: 'billing-agent', dashboard_url: 'https://review.example.com/#/reviews/418', decidable: true });
    await page.setContent(slackMessagePage(blocks, 'Greenlight', '10:04 AM (edited)'));
    expect(await page.locator('.button').allTextContents()).toEqual(['Open']);
    await page.locator('.message').screenshot({ path: path.join(screenshots, 'slack-message-decided.png') });
    await page.close();
  });
});
