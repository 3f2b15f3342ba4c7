import { expect, it } from 'vitest';
import { dashboardInBrowser, letUndoWindowPass, reviewerContext } from '../support/browser';
import { preToolUse, runHook } from '../support/claude-code';

// A Claude Code tool call, through `greenlight hook claude-code`, decided in the real
// dashboard like any other agent's review.

const running = dashboardInBrowser('greenlight-claude-code-');

it('shows a Bash call as its command, and a modification reaches Claude Code as updatedInput', async () => {
  const hook = runHook(
    ['--api-url', running.server.url, '--wait', '60'],
    preToolUse('Bash', { command: 'git push --force origin main', description: 'Push the rebased branch' }),
  );
  const context = await reviewerContext(running.browser);
  await context.clock.install();
  const page = await context.newPage();
  await page.goto(running.server.dashboardUrl!);
  const entry = page.locator('[id^="review-"]', { hasText: 'claude-code:Bash' });
  await entry.click();
  await expect.poll(() => page.locator('.reasoning').textContent()).toBe('Push the rebased branch');
  await page.keyboard.press('m');
  const editor = page.getByLabel('The action the agent should carry out instead');
  await expect.poll(() => editor.inputValue()).toBe('git push --force origin main');
  expect(await page.locator('.modify-what').innerText()).toBe('You are editing the command argument of a call of the tool Bash, as text; its other arguments stay as they are.');
  await editor.fill('git push --force-with-lease origin main');
  await page.getByRole('button', { name: 'Approve with changes' }).click();
  await letUndoWindowPass(page);

  const run = await hook;
  expect(run.code).toBe(0);
  expect(JSON.parse(run.stdout).hookSpecificOutput).toMatchObject({
    permissionDecision: 'allow',
    updatedInput: { command: 'git push --force-with-lease origin main', description: 'Push the rebased branch' },
  });
  await context.close();
});
