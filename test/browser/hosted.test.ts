import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { letUndoWindowPass } from '../support/browser';
import type { RunningCli } from '../support/cli';
import { HOSTED_OPERATOR_KEY as OPERATOR_KEY, hostedDashboardInBrowser, type Invited, SCREENSHOTS } from '../support/hosted-dashboard';
import { call } from '../support/server';

/**
 * The hosted edition's dashboard in Chromium: people follow their invitation links, sign in,
 * decide as themselves or only read, and an admin runs the organization from the console
 * (its forms: hosted-console.test.ts).
 */

const hosted = hostedDashboardInBrowser('greenlight-hosted-dashboard-');
const { invite, newPage, acceptInvitation, signIn } = hosted;
let server: RunningCli;
let adminKey: Record<string, string>;

beforeAll(() => {
  ({ server, adminKey } = hosted);
});

async function newReview(proposedAction: string): Promise<number> {
  const created = await call(server.url, 'POST', '/reviews', { task_type: 'refund', proposed_action: proposedAction, urgency: 'high' }, { headers: adminKey });
  return created.body.id;
}

describe('the hosted dashboard', () => {
  it('signs in a person who followed their invitation link, with a cookie no script can read', async () => {
    const dana = await invite('reviewer', 'Dana Reviewer');
    const page = await acceptInvitation(dana);
    // The used invitation's address is replaced by the queue's (or, once it opens one, its first review's).
    expect(page.url()).toMatch(new RegExp(`^${server.dashboardUrl}/#/(queue|reviews/\\d+)$`));
    expect(await page.locator('.account-who').textContent()).toContain('Dana Reviewer');
    expect(await page.locator('.account-who').textContent()).toContain('reviewer · Acme Support');
    // No name box: decisions carry the signed-in person's name.
    expect(await page.getByLabel('Reviewer', { exact: true }).count()).toBe(0);
    expect(await page.evaluate(() => document.cookie)).toBe('');
    // The link is used up.
    const again = await newPage();
    await again.goto(dana.invitationUrl);
    await expect.poll(() => again.getByRole('alert').textContent()).toContain('has been used or has expired');
    await page.context().close();
    await again.context().close();
  });

  it('lets a reviewer decide, and the decision is theirs', async () => {
    const riley = await invite('reviewer', 'Riley Reviewer');
    await acceptInvitation(riley).then((page) => page.context().close());
    const reviewId = await newReview('Refund order 2001 in full (EUR 80.00)');
    const page = await signIn(riley);
    await page.locator(`#review-${reviewId}`).click();
    await expect.poll(() => page.getByText('Deciding as Riley Reviewer').count()).toBe(1);
    await page.getByRole('button', { name: /^Approve/ }).click();
    await letUndoWindowPass(page);
    await expect
      .poll(async () => (await call(server.url, 'GET', `/reviews/${reviewId}/decision`, undefined, { headers: adminKey })).body?.reviewer_name)
      .toBe('Riley Reviewer');
    expect((await call(server.url, 'GET', `/reviews/${reviewId}/decision`, undefined, { headers: adminKey })).body.reviewer_id).toBe(riley.id);
    await page.context().close();
  });

  it('shows a viewer the queue without any decision button', async () => {
    const vic = await invite('viewer', 'Vic Viewer');
    const reviewId = await newReview('Refund order 2002 in full (EUR 15.00)');
    const page = await acceptInvitation(vic);
    await page.locator(`#review-${reviewId}`).click();
    await expect.poll(() => page.locator('.read-only-note').textContent()).toContain('signed in as a viewer');
    expect(await page.getByRole('button', { name: /^Approve/ }).count()).toBe(0);
    expect(await page.getByRole('link', { name: 'Console' }).count()).toBe(0);
    await page.keyboard.press('a');
    expect(await page.locator('.armed-hint').count()).toBe(0);
    await page.context().close();
  });

  it('signs out on the server: the sign-in page comes back and stays after a reload', async () => {
    const sam = await invite('reviewer', 'Sam Reviewer');
    const page = await acceptInvitation(sam);
    await page.getByRole('button', { name: 'Sign out' }).click();
    await expect.poll(() => page.getByRole('heading', { name: 'Sign in' }).count()).toBe(1);
    await page.reload();
    await expect.poll(() => page.getByRole('heading', { name: 'Sign in' }).count()).toBe(1);
    await page.getByLabel('E-mail').fill(sam.email);
    await page.getByLabel('Password').fill('not the password');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await expect.poll(() => page.getByRole('alert').textContent()).toBe('The e-mail address or the password is wrong.');
    await page.screenshot({ path: path.join(SCREENSHOTS, 'hosted-sign-in.png') });
    await page.context().close();
  });

  it('gives an admin the console: a key shown once and revoked after a confirmation, and the verified audit log', async () => {
    const alex = await invite('admin', 'Alex Admin');
    const page = await acceptInvitation(alex);
    await page.getByRole('link', { name: 'Console' }).click();
    await expect.poll(() => page.getByLabel('Name', { exact: true }).inputValue()).toBe('Acme Support');

    await page.locator('.console-nav').getByRole('link', { name: 'API keys' }).click();
    // Until the section has changed, "Name" is still the organization's name.
    await expect.poll(() => page.getByRole('heading', { level: 2, name: 'API keys' }).count()).toBe(1);
    await page.getByLabel('Name').fill('Refund agent');
    await page.getByRole('button', { name: 'Create key' }).click();
    const shown = page.locator('.shown-once-value code');
    await expect.poll(() => shown.textContent()).toMatch(/^gl_/);
    const key = (await shown.textContent()) as string;
    await page.screenshot({ path: path.join(SCREENSHOTS, 'hosted-console-api-keys.png') });
    expect((await call(server.url, 'GET', '/reviews', undefined, { headers: { authorization: `Bearer ${key}` } })).status).toBe(200);
    await page.getByRole('button', { name: 'Done' }).click();
    expect(await page.locator('.shown-once').count()).toBe(0);

    const row = page.getByRole('row', { name: /Refund agent/ });
    await row.getByRole('button', { name: 'Revoke' }).click();
    const dialog = page.getByRole('dialog');
    await expect.poll(() => dialog.getByRole('heading').textContent()).toBe('Revoke the key “Refund agent”?');
    await dialog.getByRole('button', { name: 'Revoke' }).click();
    await expect.poll(() => row.textContent()).toContain('Revoked');
    expect((await call(server.url, 'GET', '/reviews', undefined, { headers: { authorization: `Bearer ${key}` } })).status).toBe(401);

    for (const [section, file] of [['Teams', 'hosted-console-teams'], ['Agents', 'hosted-console-agents']]) {
      await page.locator('.console-nav').getByRole('link', { name: section }).click();
      await expect.poll(() => page.getByRole('heading', { level: 2, name: section }).count()).toBe(1);
      // The page's list, not the "Loading…" it shows while reading it.
      await expect.poll(() => page.getByText('Loading…').count()).toBe(0);
      await page.screenshot({ path: path.join(SCREENSHOTS, `${file}.png`) });
    }
    await page.locator('.console-nav').getByRole('link', { name: 'Audit log' }).click();
    await expect.poll(() => page.locator('.verification').textContent()).toContain('Intact');
    await expect.poll(() => page.getByRole('row', { name: /api_key\.revoked/ }).count()).toBe(1);
    await page.context().close();
  });

  it('takes a reviewer from the invitation in the console to a decision the audit log names them for', async () => {
    const morgan = await invite('admin', 'Morgan Admin');
    const admin = await acceptInvitation(morgan);
    await admin.getByRole('link', { name: 'Console' }).click();
    await admin.locator('.console-nav').getByRole('link', { name: 'Users' }).click();
    await admin.getByLabel('E-mail').fill('jo@acme.example');
    await admin.getByLabel('Name').fill('Jo Reviewer');
    await admin.getByRole('button', { name: 'Invite' }).click();
    const link = admin.locator('.shown-once-value code');
    await expect.poll(() => link.textContent()).toMatch(new RegExp(`^${server.dashboardUrl}/#/invitation/`));
    await admin.screenshot({ path: path.join(SCREENSHOTS, 'hosted-console-users.png') });
    const jo: Invited = { id: 0, email: 'jo@acme.example', name: 'Jo Reviewer', invitationUrl: (await link.textContent()) as string };

    // Jo follows the link, sets a password, signs out, and signs in again with it.
    const first = await acceptInvitation(jo);
    await first.getByRole('button', { name: 'Sign out' }).click();
    await expect.poll(() => first.getByRole('heading', { name: 'Sign in' }).count()).toBe(1);
    await first.context().close();
    const reviewId = await newReview('Refund order 2003 in full (EUR 42.00)');
    const page = await signIn(jo);
    await page.locator(`#review-${reviewId}`).click();
    await page.getByRole('button', { name: /^Approve/ }).click();
    await letUndoWindowPass(page);
    await expect
      .poll(async () => (await call(server.url, 'GET', `/reviews/${reviewId}/decision`, undefined, { headers: adminKey })).body?.reviewer_name)
      .toBe('Jo Reviewer');

    await admin.locator('.console-nav').getByRole('link', { name: 'Audit log' }).click();
    await admin.getByLabel('Action').fill('review.decided');
    await admin.getByLabel('Target ID').fill(String(reviewId));
    await admin.getByRole('button', { name: 'Apply filters' }).click();
    const entry = admin.getByRole('row', { name: /review\.decided/ });
    await expect.poll(() => entry.count()).toBe(1);
    expect(await entry.textContent()).toContain('Jo Reviewer');
    await admin.screenshot({ path: path.join(SCREENSHOTS, 'hosted-console-audit-log.png'), fullPage: true });
    await admin.context().close();
    await page.context().close();
  });

  it('lets an admin write a routing rule, try it on a sample, and the team sees the routed review under Mine', async () => {
    const robin = await invite('reviewer', 'Robin Finance');
    const finance = await call(server.url, 'POST', '/teams', { name: 'finance', member_ids: [robin.id] }, { headers: adminKey });
    expect(finance.status).toBe(201);
    const ada = await invite('admin', 'Ada Admin');
    const page = await acceptInvitation(ada);
    await page.getByRole('link', { name: 'Console' }).click();
    await page.locator('.console-nav').getByRole('link', { name: 'Routing rules' }).click();
    await page.getByLabel('Rule name').fill('large-refunds');
    await page.getByLabel('Priority').fill('100');
    await page.getByRole('button', { name: 'Add condition' }).click();
    await page.getByLabel('Condition 1: value').fill('refund');
    await page.getByRole('button', { name: 'Add condition' }).click();
    await page.getByLabel('Condition 2: field').selectOption({ label: 'Metadata…' });
    await page.getByLabel('Condition 2: metadata key').fill('amount');
    await page.getByLabel('Condition 2: operator').selectOption('>');
    await page.getByLabel('Condition 2: value').fill('1000');
    await page.getByLabel('Assign to team').selectOption({ label: 'finance' });
    await page.getByRole('button', { name: 'Add rule' }).click();
    await expect.poll(() => page.getByRole('row', { name: /large-refunds/ }).count()).toBe(1);

    await page.getByRole('button', { name: 'Try the rules' }).click();
    await expect.poll(() => page.locator('.trial-verdict').textContent()).toContain('Matches large-refunds: assigned to team finance.');
    await page.getByLabel('Sample review (JSON)').fill('{ "task_type": "refund", "proposed_action": "Refund EUR 20", "metadata": { "amount": 20 } }');
    await page.getByRole('button', { name: 'Try the rules' }).click();
    await expect.poll(() => page.locator('.trial-verdict').textContent()).toBe('No active rule matches: the review would go unassigned.');
    expect(await page.locator('.trial-rules li.fails').textContent()).toContain('metadata.amount > 1000 — the sample has 20');
    await page.context().close();

    const routed = await call(server.url, 'POST', '/reviews', { task_type: 'refund', proposed_action: 'Refund order 3001 (EUR 4,000.00)', metadata: { amount: 4000 } }, { headers: adminKey });
    const elsewhere = await newReview('Refund order 3002 in full (EUR 10.00)');
    expect(routed.body).toMatchObject({ routing_rule: 'large-refunds', assigned_team: 'finance' });
    const member = await acceptInvitation(robin);
    await member.getByRole('checkbox', { name: 'Mine' }).check();
    // Both at once: while the filtered list loads, neither review is shown.
    const shown = async (id: number): Promise<number> => member.locator(`#review-${id}`).count();
    await expect.poll(async () => [await shown(routed.body.id), await shown(elsewhere)]).toEqual([1, 0]);
    // A review routed to the team while the list is open arrives live; an unrelated one filed just
    // before it (its event comes first) does not.
    const unrelated = await newReview('Refund order 3004 in full (EUR 12.00)');
    const live = await call(server.url, 'POST', '/reviews', { task_type: 'refund', proposed_action: 'Refund order 3003 (EUR 2,500.00)', metadata: { amount: 2500 } }, { headers: adminKey });
    await expect.poll(() => member.locator(`#review-${live.body.id}`).count()).toBe(1);
    expect(await member.locator(`#review-${unrelated}`).count()).toBe(0);
    await member.context().close();
  });

  it('has two reviewers approve in turn where two approvals are required: the first sees 1 of 2, the agent gets the decision after the second', async () => {
    const created = await call(server.url, 'POST', '/organizations', { name: 'Two Keys Ltd', settings: { require_two_approvals: true } }, { headers: { authorization: `Bearer ${OPERATOR_KEY}` } });
    const twoKeys = { authorization: `Bearer ${created.body.api_key.key}` };
    const inviteHere = async (name: string): Promise<Invited> => {
      const email = `${name.toLowerCase().replace(/\W+/g, '.')}@twokeys.example`;
      const invited = await call(server.url, 'POST', '/users', { email, name, role: 'reviewer' }, { headers: twoKeys });
      return { id: invited.body.id, email, name, invitationUrl: invited.body.invitation_url };
    };
    const [kim, lee] = [await inviteHere('Kim First'), await inviteHere('Lee Second')];
    const first = await acceptInvitation(kim);
    const second = await acceptInvitation(lee);

    const agent = fetch(`${server.url}/reviews`, {
      method: 'POST',
      headers: { ...twoKeys, 'content-type': 'application/json' },
      body: JSON.stringify({ task_type: 'payout', proposed_action: 'Pay supplier invoice 88 (EUR 12,000.00)', urgency: 'high', blocking: true }),
    }).then(async (response) => (await response.json()) as { status: string; decision: { reviewer_name: string } | null });
    let reviewId = 0;
    await expect.poll(async () => (reviewId = (await call(server.url, 'GET', '/reviews?status=pending', undefined, { headers: twoKeys })).body.reviews[0]?.id ?? 0)).toBeGreaterThan(0);

    await expect.poll(() => first.locator(`#review-${reviewId}`).textContent()).toContain('Your vote · 0 of 2 approvals');
    await first.locator(`#review-${reviewId}`).click();
    await first.getByRole('button', { name: /^Approve/ }).click();
    await letUndoWindowPass(first);
    // Held for Undo, then counted: the review comes back to the queue, no longer waiting on this reviewer.
    const card = first.locator(`#review-${reviewId}`);
    await expect.poll(async () => ((await card.count()) > 0 ? card.textContent() : '')).toMatch(/(?<!Your vote · )1 of 2 approvals/);
    await card.click();
    await expect.poll(() => first.locator('.workflow-stages .approvals').textContent()).toBe('1 of 2 approvals');
    await expect.poll(() => first.locator('.read-only-note').textContent()).toContain('You voted: approve');
    expect(await first.getByRole('button', { name: /^Approve/ }).count()).toBe(0);
    await first.screenshot({ path: path.join(SCREENSHOTS, 'hosted-two-approvals.png') });

    // The second reviewer's queue learned of the first vote live.
    await expect.poll(() => second.locator(`#review-${reviewId}`).textContent()).toContain('Your vote · 1 of 2 approvals');
    await second.locator(`#review-${reviewId}`).click();
    await second.getByRole('button', { name: /^Approve/ }).click();
    await letUndoWindowPass(second);
    const answered = await agent;
    expect(answered).toMatchObject({ status: 'approved', decision: { reviewer_name: 'Lee Second' } });
    await first.context().close();
    await second.context().close();
  });

  it('lets an admin add a workflow in the console, and shows there a review its deactivated approver left stuck', async () => {
    const sole = await invite('reviewer', 'Sole Approver');
    const page = await acceptInvitation(await invite('admin', 'Wren Admin'));
    await page.getByRole('link', { name: 'Console' }).click();
    await page.locator('.console-nav').getByRole('link', { name: 'Workflows' }).click();
    await page.getByLabel('Workflow name').fill('sole check');
    await page.getByRole('button', { name: 'Add condition' }).click();
    await page.getByLabel('Condition 1: value').fill('sole-check');
    await page.getByRole('button', { name: 'Add stage' }).click();
    await page.getByLabel('Stage name').fill('sole');
    await page.getByRole('combobox', { name: 'People who approve stage 1' }).fill('Sole Approver');
    // The picker offers people once it has read them: Enter before then chooses no one.
    await expect.poll(() => page.getByRole('option', { name: /Sole Approver/ }).count()).toBe(1);
    await page.keyboard.press('Enter');
    await expect.poll(() => page.getByRole('list', { name: 'People who approve stage 1: chosen' }).textContent({ timeout: 1_000 })).toContain('Sole Approver');
    await page.getByRole('button', { name: 'Add workflow' }).click();
    await expect.poll(() => page.getByRole('row', { name: /sole check/ }).textContent()).toContain('sole: 1 of Sole Approver');

    const review = await call(server.url, 'POST', '/reviews', { task_type: 'sole-check', proposed_action: 'Close account 51' }, { headers: adminKey });
    expect(review.body.workflow).toMatchObject({ name: 'sole check', waiting_on: [sole.id], stuck: false });
    await call(server.url, 'DELETE', `/users/${sole.id}`, undefined, { headers: adminKey });
    await page.locator('.console-nav').getByRole('link', { name: 'Audit log' }).click();
    await page.locator('.console-nav').getByRole('link', { name: 'Workflows' }).click();
    await expect.poll(() => page.locator('.stuck-reviews').textContent()).toContain(`#${review.body.id} sole-check: sole check, stage 1`);
    await page.context().close();
  });

  it('lets an admin add a webhook, see its secret once, send a test and read the delivery log', async () => {
    const hits: string[] = [];
    const receiver = http.createServer((req, res) => {
      hits.push(String(req.headers['webhook-id']));
      req.resume();
      res.writeHead(204).end();
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    const target = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/greenlight`;
    try {
      const page = await acceptInvitation(await invite('admin', 'Hook Admin'));
      await page.getByRole('link', { name: 'Console' }).click();
      await page.locator('.console-nav').getByRole('link', { name: 'Webhooks' }).click();
      await page.getByLabel('Endpoint URL').fill(target);
      await page.getByLabel('review.vote').uncheck();
      await page.getByRole('button', { name: 'Add webhook' }).click();
      await expect.poll(() => page.locator('.shown-once-value code').textContent()).toMatch(/^whsec_/);
      await page.getByRole('button', { name: 'Done' }).click();
      const card = page.getByRole('region', { name: `Webhook ${target}` });
      expect(await card.textContent()).not.toContain('review.vote');
      await card.getByRole('button', { name: 'Send test' }).click();
      await expect.poll(() => hits.length).toBe(1);
      await card.getByRole('button', { name: 'Deliveries' }).click();
      await expect.poll(() => card.getByRole('row', { name: /webhook\.test/ }).textContent()).toContain('delivered');
      expect(await card.getByRole('row', { name: /webhook\.test/ }).textContent()).toContain('204 in');
      await page.screenshot({ path: path.join(SCREENSHOTS, 'hosted-console-webhooks.png') });
      await page.context().close();
    } finally {
      await new Promise((resolve) => receiver.close(resolve));
    }
  });

  it("asks before a role changes, keeps the organization's last admin, and the header follows one's own new role at once", async () => {
    const created = await call(server.url, 'POST', '/organizations', { name: 'Solo Ltd' }, { headers: { authorization: `Bearer ${OPERATOR_KEY}` } });
    const soloKey = { authorization: `Bearer ${created.body.api_key.key}` };
    const quinn = await invite('admin', 'Quinn Solo', soloKey);
    const page = await acceptInvitation(quinn);
    const who = page.locator('.account-who');
    expect(await who.textContent()).toContain('admin · Solo Ltd');
    await page.getByRole('link', { name: 'Console' }).click();
    await page.locator('.console-nav').getByRole('link', { name: 'Users' }).click();
    const ownRole = page.getByLabel('Role of Quinn Solo');
    await expect.poll(() => ownRole.inputValue()).toBe('admin');

    // Cancelled: nothing is sent, and the select shows the role Quinn has.
    await ownRole.selectOption('viewer');
    const dialog = page.getByRole('dialog', { name: 'Make Quinn Solo a viewer?' });
    await expect.poll(() => dialog.isVisible()).toBe(true);
    expect(await dialog.textContent()).toContain('You will no longer manage the organization');
    await page.screenshot({ path: path.join(SCREENSHOTS, 'hosted-console-role-change.png') });
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    await expect.poll(() => dialog.isVisible()).toBe(false);
    expect(await ownRole.inputValue()).toBe('admin');

    // Confirmed, and refused: Quinn is the only admin.
    await ownRole.selectOption('viewer');
    await dialog.getByRole('button', { name: 'Change role' }).click();
    await expect.poll(() => page.getByRole('alert').textContent()).toContain("last active admin, so they cannot be made a viewer: make another person an admin first");
    expect(await ownRole.inputValue()).toBe('admin');
    expect(await who.textContent()).toContain('admin · Solo Ltd');

    // With a second admin, Quinn becomes a reviewer: the header says so at once, and the console closes.
    await invite('admin', 'Sky Second', soloKey);
    await ownRole.selectOption('reviewer');
    await page.getByRole('dialog', { name: 'Make Quinn Solo a reviewer?' }).getByRole('button', { name: 'Change role' }).click();
    await expect.poll(() => who.textContent()).toContain('reviewer · Solo Ltd');
    await expect.poll(() => page.getByText('The account console is for admins of the organization.').count()).toBe(1);
    expect(await page.getByRole('link', { name: 'Console' }).count()).toBe(0);
    await page.context().close();
  });

  it('refuses a cross-site POST that would ride on the session cookie', async () => {
    const casey = await invite('reviewer', 'Casey Reviewer');
    const page = await acceptInvitation(casey);
    const reviewId = await newReview('Refund order 2004 in full (EUR 999.00)');
    // Another site (localhost, not 127.0.0.1) whose page submits a decision as a form, in the signed-in browser.
    const target = `${server.dashboardUrl}/api/reviews/${reviewId}/decide`;
    const attacker = http.createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(
        `<form method="post" action="${target}" enctype="text/plain"><input name='{"decision_type":"approve","padding":"' value='"}'></form><script>document.forms[0].submit()</script>`,
      );
    });
    await new Promise<void>((resolve) => attacker.listen(0, '127.0.0.1', resolve));
    try {
      const answered = page.waitForResponse((response) => response.url() === target);
      await page.goto(`http://localhost:${(attacker.address() as AddressInfo).port}/`);
      expect((await answered).status()).toBe(403);
      expect((await call(server.url, 'GET', `/reviews/${reviewId}`, undefined, { headers: adminKey })).body.status).toBe('pending');
    } finally {
      await new Promise((resolve) => attacker.close(resolve));
      await page.context().close();
    }
  });
});
