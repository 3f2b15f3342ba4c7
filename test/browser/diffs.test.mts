import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { GreenlightClient, ToolCallReviewer } from '@greenlight/client';
import type { Locator, Page } from 'playwright';
import { describe, expect, it } from 'vitest';
import { dashboardInBrowser, letUndoWindowPass, reviewerContext } from '../support/browser.js';
import { preToolUse, runHook } from '../support/claude-code.js';
import { call } from '../support/server.js';

// Diffs in the dashboard: a modified review as proposed against approved (detail, History, the
// editor's preview), an action that is a unified diff, Claude Code's file tools as file diffs,
// and the modify editor's JSON arguments.

const SCREENSHOTS = path.resolve(__dirname, '..', '..', 'docs', 'screenshots');
fs.mkdirSync(SCREENSHOTS, { recursive: true });

const running = dashboardInBrowser('greenlight-diffs-');

async function openDashboard(viewport = { width: 1280, height: 800 }, bypassCSP = false): Promise<Page> {
  const context = await reviewerContext(running.browser, { viewport, bypassCSP });
  // Time runs as usual; a test moves it past a decision's undo window.
  await context.clock.install();
  const page = await context.newPage();
  page.on('pageerror', (error) => {
    throw error;
  });
  await page.goto(running.server.dashboardUrl!);
  await expect.poll(() => page.locator('.live').textContent()).toBe('Live');
  return page;
}

async function fileReview(body: Record<string, unknown>): Promise<{ id: number }> {
  const { status, body: review } = await call(running.server.url, 'POST', '/reviews', body);
  expect(status).toBe(201);
  return review;
}

async function pendingOf(taskType: string): Promise<number> {
  let id: number | undefined;
  await expect
    .poll(async () => {
      id = (await call(running.server.url, 'GET', `/reviews?status=pending&task_type=${encodeURIComponent(taskType)}`)).body.reviews[0]?.id;
      return id;
    })
    .toBeDefined();
  return id!;
}

/**
 * The lines of the diff in `scope` as a reviewer and a screen reader get them: the sign, what
 * is said of the line ("removed: ", "added: ", nothing when unchanged), and the text shown.
 */
function linesOf(scope: Locator): Promise<Array<[string, string, string]>> {
  return scope.locator('.diff-line').evaluateAll((lines) =>
    lines.map((line) => {
      const text = line.querySelector('.diff-text')!.cloneNode(true) as HTMLElement;
      const said = text.querySelector('.visually-hidden');
      said?.remove();
      return [line.querySelector('.diff-sign')!.textContent!, said?.textContent ?? '', text.textContent!] as [string, string, string];
    }),
  );
}

/** The text of each element as it is drawn, without what only screen readers are told. */
function shownTexts(elements: Locator): Promise<string[]> {
  return elements.evaluateAll((found) =>
    found.map((element) => {
      const copy = element.cloneNode(true) as HTMLElement;
      for (const said of copy.querySelectorAll('.visually-hidden')) said.remove();
      return copy.textContent!;
    }),
  );
}

const PROPOSED_SQL = [
  'BEGIN;',
  'DELETE FROM sessions',
  "WHERE created_at < now() - interval '1 day';",
  'DELETE FROM api_tokens WHERE revoked = true;',
  'COMMIT; -- diff-sql',
].join('\n');
const APPROVED_SQL = [
  'BEGIN;',
  'DELETE FROM sessions',
  "WHERE last_seen < now() - interval '30 days'",
  '  AND user_id NOT IN (SELECT id FROM admins);',
  'COMMIT; -- diff-sql',
].join('\n');
const SQL_DIFF: Array<[string, string, string]> = [
  [' ', '', 'BEGIN;'],
  [' ', '', 'DELETE FROM sessions'],
  ['−', 'removed: ', "WHERE created_at < now() - interval '1 day';"],
  ['−', 'removed: ', 'DELETE FROM api_tokens WHERE revoked = true;'],
  ['+', 'added: ', "WHERE last_seen < now() - interval '30 days'"],
  ['+', 'added: ', '  AND user_id NOT IN (SELECT id FROM admins);'],
  [' ', '', 'COMMIT; -- diff-sql'],
];

describe('a modified review', () => {
  it('shows its multi-line SQL as proposed against approved, removed and added lines marked, in the detail and in History', async () => {
    const review = await fileReview({ task_type: 'db-cleanup', proposed_action: PROPOSED_SQL, urgency: 'high', agent_reasoning: 'Sessions table is 40 GB.' });
    await call(running.server.url, 'POST', `/reviews/${review.id}/decide`, {
      decision_type: 'modify',
      modified_action: APPROVED_SQL,
      notes: 'Keep admins signed in; tokens are a separate change.',
      reviewer_name: 'kim@example.com',
    });
    const page = await openDashboard({ width: 1440, height: 900 });
    await page.getByRole('link', { name: 'History' }).click();
    const row = page.locator('.history tbody tr', { hasText: `db-cleanup #${review.id}` });
    await expect.poll(() => linesOf(row)).toEqual(SQL_DIFF);
    expect(await row.locator('del.diff-word').allTextContents()).toEqual(['created_at', '1 day', ';']);
    expect(await row.locator('ins.diff-word').allTextContents()).toEqual(['last_seen', '30 days']);
    await page.screenshot({ path: path.join(SCREENSHOTS, 'diff-history.png') });

    await row.getByRole('link', { name: `db-cleanup #${review.id}` }).click();
    const decision = page.locator('section', { has: page.locator('#decision-heading') });
    await expect.poll(() => linesOf(decision)).toEqual(SQL_DIFF);
    expect(await decision.getByRole('group').getAttribute('aria-label')).toBe('Changes from the proposed to the approved text: 2 lines removed, 2 lines added');
    const [removed, added] = await Promise.all(
      ['removed', 'added'].map((kind) => decision.locator(`.diff-line.${kind}`).first().evaluate((line) => getComputedStyle(line).backgroundColor)),
    );
    expect(removed).toBe('rgb(254, 242, 242)');
    expect(added).toBe('rgb(240, 253, 244)');
    expect(await decision.locator('del.diff-word').first().evaluate((word) => getComputedStyle(word).textDecorationLine)).toBe('line-through');
    await decision.scrollIntoViewIfNeeded();
    await page.screenshot({ path: path.join(SCREENSHOTS, 'diff-modified.png') });

    // The approved text alone is one click away.
    await decision.getByRole('button', { name: 'Show the approved text alone' }).click();
    expect(await decision.locator('pre.modified').innerText()).toBe(APPROVED_SQL);
    await page.context().close();
  });
});

describe('an action that is a unified diff', () => {
  it('is coloured: removed lines red, added lines green, hunk and file headers apart', async () => {
    const patch = [
      'diff --git a/server/config/limits.ts b/server/config/limits.ts',
      'index 3f2c1aa..8b0d9e1 100644',
      '--- a/server/config/limits.ts',
      '+++ b/server/config/limits.ts',
      '@@ -4,7 +4,7 @@ export const LIMITS = {',
      '   requestsPerMinute: 600,',
      '   maxBodyBytes: 1_048_576,',
      '-  burst: 10,',
      '+  burst: 500,',
      '   // Per API key, not per IP.',
      '-  perKey: true,',
      '+  perKey: false,',
      ' };',
    ].join('\n');
    const review = await fileReview({ task_type: 'apply-patch', proposed_action: patch, urgency: 'medium', framework: 'diff-patch' });
    const page = await openDashboard();
    await page.locator(`#review-${review.id}`).click();
    const proposed = page.locator('pre.proposed');
    await expect.poll(() => shownTexts(proposed.locator('.patch-line.removed'))).toEqual(['-  burst: 10,', '-  perKey: true,']);
    expect(await shownTexts(proposed.locator('.patch-line.added'))).toEqual(['+  burst: 500,', '+  perKey: false,']);
    expect(await shownTexts(proposed.locator('.patch-line.hunk'))).toEqual(['@@ -4,7 +4,7 @@ export const LIMITS = {']);
    expect(await proposed.locator('.patch-line.file').count()).toBe(4);
    expect(await proposed.locator('.patch-line.removed .visually-hidden').first().textContent()).toBe('removed: ');
    const colour = (kind: string) => proposed.locator(`.patch-line.${kind}`).first().evaluate((line) => getComputedStyle(line).backgroundColor);
    expect([await colour('removed'), await colour('added'), await colour('context')]).toEqual(['rgb(254, 242, 242)', 'rgb(240, 253, 244)', 'rgba(0, 0, 0, 0)']);
    await page.screenshot({ path: path.join(SCREENSHOTS, 'diff-patch.png') });
    await page.context().close();
  });
});

describe("Claude Code's file tools", () => {
  it('show an Edit, a MultiEdit and a Write as file diffs, with the JSON one click away', async () => {
    const hookArgs = ['--api-url', running.server.url, '--wait', '60'];
    const edit = runHook(
      hookArgs,
      preToolUse('Edit', {
        file_path: '/home/dev/shop/src/refunds.ts',
        old_string: "export const MAX_REFUND_EUR = 250;\nexport const NEEDS_REVIEW = (amount: number) => amount > 100;",
        new_string: "export const MAX_REFUND_EUR = 2500;\nexport const NEEDS_REVIEW = (amount: number) => amount > 1000;\n// Raised for the holiday sale.",
      }),
    );
    const editId = await pendingOf('claude-code:Edit');
    const multiEdit = runHook(
      hookArgs,
      preToolUse('MultiEdit', {
        file_path: '/home/dev/shop/.env.production',
        edits: [
          { old_string: 'LOG_LEVEL=info', new_string: 'LOG_LEVEL=debug' },
          { old_string: 'PAYMENTS_SANDBOX=false', new_string: 'PAYMENTS_SANDBOX=true', replace_all: true },
        ],
      }),
    );
    const multiEditId = await pendingOf('claude-code:MultiEdit');
    const write = runHook(hookArgs, preToolUse('Write', { file_path: '/home/dev/shop/scripts/purge.sh', content: '#!/bin/sh\nset -e\nrm -rf /var/cache/shop/*\n' }));
    const writeId = await pendingOf('claude-code:Write');

    const page = await openDashboard({ width: 1440, height: 900 });
    await page.locator(`#review-${editId}`).click();
    const card = page.locator('section', { has: page.locator('#proposed-heading') });
    await expect.poll(() => card.locator('.file-path').innerText()).toBe('Edits /home/dev/shop/src/refunds.ts');
    expect(await linesOf(card)).toEqual([
      ['−', 'removed: ', 'export const MAX_REFUND_EUR = 250;'],
      ['−', 'removed: ', 'export const NEEDS_REVIEW = (amount: number) => amount > 100;'],
      ['+', 'added: ', 'export const MAX_REFUND_EUR = 2500;'],
      ['+', 'added: ', 'export const NEEDS_REVIEW = (amount: number) => amount > 1000;'],
      ['+', 'added: ', '// Raised for the holiday sale.'],
    ]);
    expect(await card.locator('del.diff-word').allTextContents()).toEqual(['250', '100']);
    expect(await card.locator('ins.diff-word').allTextContents()).toEqual(['2500', '1000']);
    // Approve waits for the end of the action: here, the end of the file diff, in view.
    await expect.poll(() => page.getByRole('button', { name: /^Approve/ }).isEnabled()).toBe(true);
    await page.screenshot({ path: path.join(SCREENSHOTS, 'diff-claude-edit.png') });
    await card.getByRole('button', { name: 'Show the JSON' }).click();
    expect(JSON.parse(await card.locator('pre.proposed').innerText())).toMatchObject({ file_path: '/home/dev/shop/src/refunds.ts', old_string: expect.stringContaining('250') });
    expect(await card.locator('.file-change').count()).toBe(0);

    await page.locator(`#review-${multiEditId}`).click();
    await expect.poll(() => card.locator('.file-edit-head').allInnerTexts()).toEqual(['Edit 1 of 2', 'Edit 2 of 2 · replaces every occurrence in the file']);
    expect(await card.locator('.file-edit').nth(0).evaluate((section) => section.getAttribute('aria-label'))).toBe('Edit 1 of 2');
    expect(await linesOf(card.locator('.file-edit').nth(1))).toEqual([
      ['−', 'removed: ', 'PAYMENTS_SANDBOX=false'],
      ['+', 'added: ', 'PAYMENTS_SANDBOX=true'],
    ]);

    await page.locator(`#review-${writeId}`).click();
    await expect.poll(() => card.locator('.file-path').innerText()).toBe('Writes /home/dev/shop/scripts/purge.sh — the whole file, as below');
    expect(await linesOf(card)).toEqual([
      ['+', 'added: ', '#!/bin/sh'],
      ['+', 'added: ', 'set -e'],
      ['+', 'added: ', 'rm -rf /var/cache/shop/*'],
    ]);
    await page.context().close();

    for (const id of [editId, multiEditId, writeId]) {
      await call(running.server.url, 'POST', `/reviews/${id}/decide`, { decision_type: 'reject', notes: 'Not today.', reviewer_name: 'kim@example.com' });
    }
    for (const run of await Promise.all([edit, multiEdit, write])) expect(JSON.parse(run.stdout).hookSpecificOutput.permissionDecision).toBe('deny');
  });
});

describe('the modify editor', () => {
  it('shows the reviewer’s changes as a diff against the proposed action before they approve', async () => {
    const proposed = PROPOSED_SQL.replace('diff-sql', 'diff-preview');
    const agent = fetch(`${running.server.url}/reviews`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ task_type: 'db-preview', proposed_action: proposed, urgency: 'high', blocking: true }),
    }).then((response) => response.json());
    const id = await pendingOf('db-preview');
    const page = await openDashboard({ width: 1440, height: 900 });
    await page.locator(`#review-${id}`).click();
    await page.keyboard.press('m');
    const editor = page.getByLabel('The action the agent should carry out instead');
    await expect.poll(() => editor.inputValue()).toBe(proposed);
    expect(await page.locator('.modify-what').innerText()).toBe('You are editing the action text: the agent receives exactly this text instead.');
    const preview = page.locator('.modify-preview');
    expect(await preview.locator('.hint').innerText()).toContain('None yet.');

    const approved = APPROVED_SQL.replace('diff-sql', 'diff-preview');
    await editor.fill(approved);
    await expect.poll(() => linesOf(preview)).toEqual(SQL_DIFF.map(([sign, said, text]) => [sign, said, text.replace('diff-sql', 'diff-preview')]));
    // The editor fills the window's height.
    const dialog = (await page.getByRole('dialog').boundingBox())!;
    expect(dialog.height).toBeGreaterThan(900 - 40);
    await page.screenshot({ path: path.join(SCREENSHOTS, 'modify-editor-preview.png') });
    await page.getByRole('button', { name: 'Approve with changes' }).click();
    await letUndoWindowPass(page);
    expect((await agent).decision).toMatchObject({ decision_type: 'modify', modified_action: approved });
    await page.context().close();
  });

  it('edits a tool call’s JSON arguments: checks them as typed, holds Approve while invalid, and offers fields from the tool’s input schema', async () => {
    const reviewer = new ToolCallReviewer(new GreenlightClient({ baseUrl: running.server.url }), { framework: 'ai-sdk' });
    const input = { to: 'all-customers@shop.example', subject: 'Your order is delayed', body: 'We are sorry: orders ship next week.', priority: 'normal', retries: 0 };
    const inputSchema = {
      type: 'object',
      required: ['to', 'subject', 'body'],
      properties: {
        to: { type: 'string', description: 'Recipient address or list' },
        subject: { type: 'string' },
        body: { type: 'string' },
        priority: { enum: ['low', 'normal', 'urgent'] },
        retries: { type: 'integer', description: 'Resends if the server refuses' },
        attachments: { type: 'array', items: { type: 'string' } },
      },
    };
    const outcome = reviewer.review({ toolName: 'sendEmail', input, inputSchema, toolCallId: 'call-7' });
    const id = await pendingOf('ai-sdk:sendEmail');
    const page = await openDashboard({ width: 1440, height: 900 });
    await page.locator(`#review-${id}`).click();
    await page.keyboard.press('m');
    expect(await page.locator('.modify-what').innerText()).toBe(
      'You are editing the JSON arguments of a call of the tool sendEmail: the tool is called with this JSON object instead.',
    );
    const editor = page.getByLabel("The tool call's arguments, as JSON");
    await expect.poll(async () => JSON.parse(await editor.inputValue())).toEqual(input);
    const approve = page.getByRole('button', { name: 'Approve with changes' });

    await editor.fill('{\n  "to": "vip-customers@shop.example"\n  "subject": "Your order is delayed"\n}');
    const error = page.getByRole('alert').filter({ hasText: 'Not valid JSON arguments' });
    await expect.poll(() => error.innerText()).toContain('at line 3, column 3: Expected “,” or “}” after the property’s value.');
    expect(await approve.isDisabled()).toBe(true);
    expect(await editor.getAttribute('aria-invalid')).toBe('true');
    expect(await page.getByLabel('to (required)', { exact: true }).isDisabled()).toBe(true);
    await editor.fill('["not", "an object"]');
    await expect.poll(() => error.innerText()).toContain('The arguments must be one JSON object, { … }, not an array.');
    expect(await approve.isDisabled()).toBe(true);

    await editor.fill(JSON.stringify(input, null, 2));
    await expect.poll(() => error.count()).toBe(0);
    // Fields for the top-level strings, the enum and the integer; the array stays in the JSON.
    expect(await page.locator('.argument-field label').allInnerTexts()).toEqual(['to (required)', 'subject (required)', 'body (required)', 'priority', 'retries']);
    await page.getByLabel('to (required)', { exact: true }).fill('vip-customers@shop.example');
    await page.getByLabel('priority', { exact: true }).selectOption({ label: '"urgent"' });
    await page.getByLabel('retries', { exact: true }).fill('2');
    await page.getByLabel('retries', { exact: true }).press('Tab');
    const edited = { ...input, to: 'vip-customers@shop.example', priority: 'urgent', retries: 2 };
    await expect.poll(async () => JSON.parse(await editor.inputValue())).toEqual(edited);
    expect(await page.getByLabel('to (required)', { exact: true }).inputValue()).toBe('vip-customers@shop.example');
    await expect.poll(() => linesOf(page.locator('.modify-preview'))).toContainEqual(['+', 'added: ', '  "priority": "urgent",']);
    await page.screenshot({ path: path.join(SCREENSHOTS, 'modify-editor-json.png') });

    // And the other way: the JSON edited by hand shows in the fields.
    await editor.fill(JSON.stringify({ ...edited, subject: 'Delayed: a gift inside' }, null, 2));
    await expect.poll(() => page.getByLabel('subject (required)', { exact: true }).inputValue()).toBe('Delayed: a gift inside');

    await approve.click();
    await letUndoWindowPass(page);
    expect(await outcome).toMatchObject({ outcome: 'edit', input: { ...edited, subject: 'Delayed: a gift inside' } });
    await page.context().close();
  });
});

describe('accessibility', () => {
  /** axe-core's violations on the page as it stands: its script is the test's own, which the page's CSP would refuse. */
  async function axeViolations(page: Page): Promise<string[]> {
    await page.addScriptTag({ path: createRequire(import.meta.url).resolve('axe-core/axe.min.js') });
    return page.evaluate(async () => {
      const axe = (window as unknown as { axe: { run: (context: Document) => Promise<{ violations: Array<{ id: string; impact: string; nodes: unknown[] }> }> } }).axe;
      const result = await axe.run(document);
      return result.violations.map((violation) => `${violation.id}: ${violation.impact} (${violation.nodes.length})`);
    });
  }

  it('a diff in the detail and the modify editor with its fields have no axe-core violations', async () => {
    const review = await fileReview({ task_type: 'axe-diff', proposed_action: PROPOSED_SQL, urgency: 'low' });
    await call(running.server.url, 'POST', `/reviews/${review.id}/decide`, { decision_type: 'modify', modified_action: APPROVED_SQL, reviewer_name: 'kim@example.com' });
    const input = { to: 'ops@example.com', priority: 'low', retries: 1, body: 'Deploy done' };
    const toolCall = await fileReview({
      task_type: 'ai-sdk:notify',
      proposed_action: JSON.stringify(input, null, 2),
      metadata: {
        tool_input_schema: { type: 'object', properties: { to: { type: 'string' }, priority: { enum: ['low', 'high'] }, retries: { type: 'integer' }, urgent: { type: 'boolean' } } },
        tool_name: 'notify',
        tool_input: input,
      },
    });
    const page = await openDashboard({ width: 1280, height: 800 }, true);
    await page.getByRole('link', { name: 'History' }).click();
    await page.locator('.history tbody tr', { hasText: `axe-diff #${review.id}` }).getByRole('link', { name: `axe-diff #${review.id}` }).click();
    await expect.poll(() => page.locator('#decision-heading ~ .modified-action .diff-line').count()).toBe(7);
    expect(await axeViolations(page)).toEqual([]);

    await page.getByRole('link', { name: /^Queue/ }).click();
    await page.locator(`#review-${toolCall.id}`).click();
    await page.keyboard.press('m');
    await page.getByLabel('retries', { exact: true }).fill('3');
    await page.getByLabel('retries', { exact: true }).press('Tab');
    await expect.poll(() => page.locator('.modify-preview .diff-line.added').count()).toBe(1);
    expect(await axeViolations(page)).toEqual([]);
    await page.context().close();
  });
});
