import path from 'node:path';
import type { Locator, Page } from 'playwright';
import { describe, expect, it } from 'vitest';
import { axeViolations } from '../support/browser';
import { HOSTED_OPERATOR_KEY, hostedDashboardInBrowser, type Invited, SCREENSHOTS } from '../support/hosted-dashboard';
import { call } from '../support/server';

/**
 * The console's forms in Chromium (hosted edition): people picked by name where a rule assigns
 * or a stage approves (never a viewer, never a deactivated person), conditions and stages as
 * rows, and the organization's settings as toggles that keep the settings Greenlight does not read.
 */

const hosted = hostedDashboardInBrowser('greenlight-hosted-console-');

/** Shows the whole of a long console page, from its top, in a window `height` tall: the console scrolls inside, so a full-page shot would not show more. */
async function showWhole(page: Page, height: number): Promise<void> {
  await page.setViewportSize({ width: 1280, height });
  await page.locator('.console-body').evaluate((body) => body.scrollTo(0, 0));
}

async function consoleSection(page: Page, section: string): Promise<void> {
  await page.getByRole('link', { name: 'Console' }).click();
  await page.locator('.console-nav').getByRole('link', { name: section }).click();
  await expect.poll(() => page.getByRole('heading', { level: 2, name: section }).count()).toBe(1);
}

async function deactivated(invited: Invited): Promise<Invited> {
  expect((await call(hosted.server.url, 'DELETE', `/users/${invited.id}`, undefined, { headers: hosted.adminKey })).status).toBe(204);
  return invited;
}

/** What a picker says of its list now ("2 people match", "No one to choose matches “vera”"). */
async function pickerStatus(picker: Locator, page: Page): Promise<string> {
  return (await page.locator(`#${await picker.getAttribute('aria-describedby')}`).textContent()) ?? '';
}

/** The names a picker lists now. */
async function namesOffered(picker: Locator, page: Page): Promise<string[]> {
  const list = page.locator(`#${await picker.getAttribute('aria-controls')}`);
  return (await list.isVisible()) ? list.getByRole('option').locator('.option-name').allTextContents() : [];
}

/** Types into a picker key by key, sees `name` offered alone, chooses them with Enter, and sees them among those `chosen`. */
async function pickAlone(picker: Locator, page: Page, typed: string, name: string, chosen: Locator): Promise<void> {
  await picker.fill('');
  await picker.pressSequentially(typed);
  await expect.poll(() => namesOffered(picker, page)).toEqual([name]);
  await picker.press('Enter');
  await expect.poll(() => chosen.textContent()).toContain(name);
}

/** Adds a condition row and fills it: `field` as the form names it ("Task type", or "Metadata…" with `key`). */
async function addCondition(form: Locator, condition: { field: string; key?: string; operator: string; value: string }): Promise<void> {
  await form.getByRole('button', { name: 'Add condition' }).click();
  const row = (await form.locator('.condition-row').count()) as number;
  await form.getByLabel(`Condition ${row}: field`).selectOption({ label: condition.field });
  if (condition.key) await form.getByLabel(`Condition ${row}: metadata key`).fill(condition.key);
  await form.getByLabel(`Condition ${row}: operator`).selectOption(condition.operator);
  await form.getByLabel(`Condition ${row}: value`).fill(condition.value);
}

describe('the console as forms', () => {
  it('assigns a routing rule to a person picked by name, never offering a viewer or a deactivated person', async () => {
    const dana = await hosted.invite('reviewer', 'Dana Decider');
    await hosted.invite('viewer', 'Vera Viewer');
    await deactivated(await hosted.invite('reviewer', 'Dora Departed'));
    const page = await hosted.acceptInvitation(await hosted.invite('admin', 'Rita Router'));
    await consoleSection(page, 'Routing rules');
    // Named for what it does: adding a rule, then editing it.
    const form = page.getByRole('form', { name: /^(Add a routing rule|Edit the rule)/ });
    await form.getByLabel('Rule name').fill('vip-refunds');
    await form.getByLabel('Priority').fill('50');

    const picker = form.getByRole('combobox', { name: 'Assign to person' });
    for (const name of ['vera', 'dora']) {
      await picker.fill(name);
      await expect.poll(() => pickerStatus(picker, page)).toBe(`No one to choose matches “${name}”`);
    }
    await picker.fill('d');
    await expect.poll(() => namesOffered(picker, page)).toContain('Dana Decider');
    expect(await namesOffered(picker, page)).not.toContain('Dora Departed');
    await pickAlone(picker, page, 'dana dec', 'Dana Decider', form.getByRole('list', { name: 'Assign to person: chosen' }));

    await addCondition(form, { field: 'Task type', operator: '=', value: 'refund' });
    await addCondition(form, { field: 'Metadata…', key: 'amount', operator: '>', value: '1000' });
    await form.getByLabel('Slack channel').fill('C0VIPREFUNDS');
    await form.getByRole('button', { name: 'Add rule' }).click();
    const row = page.getByRole('row', { name: /vip-refunds/ });
    await expect.poll(() => row.textContent()).toContain('task_type = refund · metadata.amount > 1000');
    expect(await row.textContent()).toContain('Dana Decider');
    expect(await row.textContent()).toContain('C0VIPREFUNDS');
    const stored = (await call(hosted.server.url, 'GET', '/routing-rules', undefined, { headers: hosted.adminKey })).body.routing_rules;
    expect(stored.find((rule: { name: string }) => rule.name === 'vip-refunds')).toMatchObject({
      priority: 50,
      assign_to_user_id: dana.id,
      assign_to_team_id: null,
      slack_channel_id: 'C0VIPREFUNDS',
      conditions: { task_type: 'refund', 'metadata.amount': { operator: '>', value: 1000 } },
    });

    // The sample the tester starts with (a refund of 1,250) meets it.
    await page.getByRole('button', { name: 'Try the rules' }).click();
    await expect.poll(() => page.locator('.trial-verdict').textContent()).toContain('Matches vip-refunds: assigned to Dana Decider');
    // Opened again, the form shows the rule as it was made: the person by name, the conditions as rows.
    await row.getByRole('button', { name: 'Edit' }).click();
    await expect.poll(() => form.getByLabel('Condition 2: metadata key').inputValue()).toBe('amount');
    expect(await form.getByRole('list', { name: 'Assign to person: chosen' }).textContent()).toContain('Dana Decider');
    expect(await form.getByLabel('Slack channel').inputValue()).toBe('C0VIPREFUNDS');
    await showWhole(page, 1200);
    await page.screenshot({ path: path.join(SCREENSHOTS, 'hosted-console-routing-rules.png') });
    await page.context().close();
  });

  it('builds a two-stage workflow with the form: approvers picked by name, a viewer never offered, too many approvals refused before saving', async () => {
    const finn = await hosted.invite('reviewer', 'Finn Ledger');
    const viv = await hosted.invite('viewer', 'Viv Onlooker');
    const max = await hosted.invite('admin', 'Max Manager');
    const team = await call(hosted.server.url, 'POST', '/teams', { name: 'ledger', member_ids: [finn.id, viv.id] }, { headers: hosted.adminKey });
    const page = await hosted.acceptInvitation(await hosted.invite('admin', 'Wes Workflow'));
    await consoleSection(page, 'Workflows');
    const form = page.getByRole('form', { name: 'Add an approval workflow' });
    // Nothing is there to be saved unedited: no stages, and no JSON to type.
    expect(await form.getByText('No stages yet: add the first one.').count()).toBe(1);
    expect(await form.getByRole('textbox', { name: /JSON/ }).count()).toBe(0);
    await form.getByLabel('Workflow name').fill('ledger checks');
    await addCondition(form, { field: 'Task type', operator: '=', value: 'ledger-change' });
    await form.getByRole('button', { name: 'Add workflow' }).click();
    await expect.poll(() => form.getByRole('alert').textContent()).toBe('Add a stage: a workflow needs at least one.');

    // Stage 1, the team's: its viewer does not count, so two approvals cannot be given.
    await form.getByRole('button', { name: 'Add stage' }).click();
    const first = form.getByRole('group', { name: 'Stage 1' });
    await expect.poll(() => first.getByLabel('Stage name').evaluate((input) => input === document.activeElement)).toBe(true);
    await page.keyboard.type('ledger');
    await first.getByLabel('Team').selectOption({ label: 'ledger (1 who may approve)' });
    const approvals = first.getByLabel('Approvals needed');
    await approvals.fill('2');
    await expect.poll(() => first.locator('.form-error').textContent()).toContain('Stage 1 asks for 2 approvals, but only 1 person may approve it: add approvers, or ask for fewer.');
    expect(await approvals.getAttribute('aria-invalid')).toBe('true');
    // Past the most its approvers can give, the number keeps the form from being sent.
    expect(await approvals.evaluate((input) => (input as HTMLInputElement).validity.rangeOverflow)).toBe(true);
    await approvals.fill('1');
    await expect.poll(() => first.locator('.hint').last().textContent()).toBe('1 person may approve this stage.');

    // Stage 2, by keyboard: a name typed, the first match chosen with Enter.
    await form.getByRole('button', { name: 'Add stage' }).click();
    const second = form.getByRole('group', { name: 'Stage 2' });
    await second.getByLabel('Stage name').fill('sign-off');
    const picker = second.getByRole('combobox', { name: 'People who approve stage 2' });
    await picker.fill('viv');
    await expect.poll(() => pickerStatus(picker, page)).toBe('No one to choose matches “viv”');
    await picker.fill('');
    await picker.press('ArrowDown');
    await expect.poll(() => namesOffered(picker, page)).toContain('Max Manager');
    expect(await namesOffered(picker, page)).not.toContain('Viv Onlooker');
    await pickAlone(picker, page, 'manager', 'Max Manager', second.getByRole('list', { name: 'People who approve stage 2: chosen' }));

    // Reordered, and back.
    await second.getByRole('button', { name: 'Move up: stage 2' }).click();
    await expect.poll(() => form.getByRole('group', { name: 'Stage 1' }).getByLabel('Stage name').inputValue()).toBe('sign-off');
    await form.getByRole('group', { name: 'Stage 1' }).getByRole('button', { name: 'Move down: stage 1' }).click();
    await expect.poll(() => form.getByRole('group', { name: 'Stage 1' }).getByLabel('Stage name').inputValue()).toBe('ledger');

    await showWhole(page, 1400);
    await page.screenshot({ path: path.join(SCREENSHOTS, 'hosted-console-workflows.png') });
    await form.getByRole('button', { name: 'Add workflow' }).click();
    await expect.poll(() => page.getByRole('row', { name: /ledger checks/ }).textContent()).toContain('sign-off: 1 of Max Manager');
    const stored = (await call(hosted.server.url, 'GET', '/workflows', undefined, { headers: hosted.adminKey })).body.workflows;
    expect(stored.find((workflow: { name: string }) => workflow.name === 'ledger checks')).toMatchObject({
      conditions: { task_type: 'ledger-change' },
      stages: [
        { name: 'ledger', approvers: { team_id: team.body.id }, required_approvals: 1 },
        { name: 'sign-off', approvers: { user_ids: [max.id] }, required_approvals: 1 },
      ],
    });
    const review = await call(hosted.server.url, 'POST', '/reviews', { task_type: 'ledger-change', proposed_action: 'Write off invoice 77' }, { headers: hosted.adminKey });
    expect(review.body.workflow).toMatchObject({ name: 'ledger checks', waiting_on: [finn.id] });
    await page.context().close();
  });

  it("switches require_two_approvals on and off with a toggle, keeping the organization's other settings", async () => {
    const settings = { region: 'eu', escalation: { after_minutes: 30 } };
    const created = await call(hosted.server.url, 'POST', '/organizations', { name: 'Toggle Ltd', settings }, { headers: { authorization: `Bearer ${HOSTED_OPERATOR_KEY}` } });
    const key = { authorization: `Bearer ${created.body.api_key.key}` };
    const stored = async (): Promise<Record<string, unknown>> => (await call(hosted.server.url, 'GET', `/organizations/${created.body.organization.id}`, undefined, { headers: key })).body.settings;
    const page = await hosted.acceptInvitation(await hosted.invite('admin', 'Tess Toggle', key));
    await consoleSection(page, 'Organization');
    const toggle = page.getByRole('switch', { name: 'Require two approvals' });
    await expect.poll(() => toggle.isChecked()).toBe(false);
    expect(JSON.parse(await page.getByLabel('Other settings (JSON)').inputValue())).toEqual(settings);

    await toggle.check();
    await page.getByRole('button', { name: 'Save' }).click();
    await expect.poll(() => page.getByRole('status').filter({ hasText: 'Saved.' }).count()).toBe(1);
    expect(await stored()).toEqual({ ...settings, require_two_approvals: true });
    await page.screenshot({ path: path.join(SCREENSHOTS, 'hosted-console-organization.png') });

    await toggle.uncheck();
    await page.getByRole('button', { name: 'Save' }).click();
    await expect.poll(stored).toEqual({ ...settings, require_two_approvals: false });
    await page.context().close();
  });

  it('adds a team member picked by name with the keyboard alone', async () => {
    const tia = await hosted.invite('reviewer', 'Tia Teammate');
    const team = await call(hosted.server.url, 'POST', '/teams', { name: 'night shift' }, { headers: hosted.adminKey });
    const page = await hosted.acceptInvitation(await hosted.invite('admin', 'Ned Nightlead'));
    await consoleSection(page, 'Teams');
    const card = page.getByRole('region', { name: /night shift/ });
    await card.getByRole('combobox', { name: 'New member' }).focus();
    await page.keyboard.type('tia');
    // The picker offers people once it has read them: Enter before then chooses no one.
    await expect.poll(() => card.getByRole('option', { name: /Tia Teammate/ }).count()).toBe(1);
    await page.keyboard.press('Enter');
    await page.keyboard.press('Enter');
    await expect.poll(() => card.locator('.members').textContent()).toContain('Tia Teammate');
    const members = (await call(hosted.server.url, 'GET', `/teams/${team.body.id}`, undefined, { headers: hosted.adminKey })).body.members;
    expect(members.map((member: { id: number }) => member.id)).toEqual([tia.id]);
    await page.context().close();
  });

  it('has no axe-core violations on the forms, a picker open and a stage added', async () => {
    await hosted.invite('reviewer', 'Axel Approver');
    await call(hosted.server.url, 'POST', '/teams', { name: 'axe checkers' }, { headers: hosted.adminKey });
    const page = await hosted.acceptInvitation(await hosted.invite('admin', 'Ada Accessible'), { bypassCSP: true });
    const violations: Record<string, string[]> = {};
    await consoleSection(page, 'Routing rules');
    await page.getByRole('button', { name: 'Add condition' }).click();
    await page.getByRole('combobox', { name: 'Assign to person' }).fill('axel');
    await expect.poll(() => page.getByRole('option', { name: /Axel Approver/ }).count()).toBe(1);
    violations['routing rules'] = await axeViolations(page);
    await consoleSection(page, 'Workflows');
    await page.getByRole('button', { name: 'Add stage' }).click();
    await page.getByRole('combobox', { name: 'People who approve stage 1' }).fill('ax');
    await expect.poll(() => page.getByRole('option', { name: /Axel Approver/ }).count()).toBe(1);
    violations.workflows = await axeViolations(page);
    await consoleSection(page, 'Organization');
    await expect.poll(() => page.getByRole('switch', { name: 'Require two approvals' }).count()).toBe(1);
    violations.Organization = await axeViolations(page);
    await consoleSection(page, 'Teams');
    await expect.poll(() => page.getByRole('combobox', { name: 'New member' }).count()).toBeGreaterThan(0);
    violations.Teams = await axeViolations(page);
    expect(violations).toEqual({ 'routing rules': [], workflows: [], Organization: [], Teams: [] });
    await page.context().close();
  });
});
