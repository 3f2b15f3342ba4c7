import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type HookRun, preToolUse, runHook } from '../support/claude-code';
import { CLI, freePort, runNode } from '../support/cli';
import { call, startTestServer, type TestServer } from '../support/server';
import { makeTempDir } from '../support/temp';
import { startRewritingProxy } from '../support/rewriting-proxy';

// `greenlight hook claude-code` run as Claude Code runs it: a child process fed a real
// PreToolUse event on standard input, answering on standard output.

const BASH = { command: 'rm -rf build', description: 'Remove the build output' };

describe('greenlight hook claude-code', () => {
  let server: TestServer;
  beforeEach(async () => {
    server = await startTestServer();
  });
  afterEach(() => server.dispose());

  /** Runs the hook for one event while a reviewer decides its review as soon as it is waiting. */
  async function reviewed(
    toolName: string,
    toolInput: Record<string, unknown>,
    decision: Record<string, unknown>,
    { args = [], cwd, env }: { args?: string[]; cwd?: string; env?: Record<string, string> } = {},
  ): Promise<{ run: HookRun; review: any }> {
    const running = runHook(['--api-url', server.url, '--wait', '60', ...args], preToolUse(toolName, toolInput, cwd), env);
    const reviewId = await firstPending();
    const decided = await call(server.url, 'POST', `/reviews/${reviewId}/decide`, { reviewer_name: 'dana', ...decision });
    expect(decided.status).toBe(200);
    const run = await running;
    return { run, review: (await call(server.url, 'GET', `/reviews/${reviewId}`)).body };
  }

  /** The id of the first pending review, once the hook has filed one. */
  async function firstPending(): Promise<number> {
    let pending: any[] = [];
    while (pending.length === 0) {
      pending = (await call(server.url, 'GET', '/reviews?status=pending')).body.reviews;
      if (pending.length === 0) await new Promise((resolve) => setTimeout(resolve, 20));
    }
    return pending[0].id;
  }

  function answerOf(run: HookRun): any {
    expect(run.code).toBe(0);
    return JSON.parse(run.stdout).hookSpecificOutput;
  }

  it('allows an approved command, and files it as a review a person can read', async () => {
    const { run, review } = await reviewed('Bash', BASH, { decision_type: 'approve', notes: 'fine' });
    expect(answerOf(run)).toEqual({ hookEventName: 'PreToolUse', permissionDecision: 'allow', permissionDecisionReason: `Approved by dana in Greenlight review #${review.id}. Notes: fine` });
    expect(review).toMatchObject({
      task_type: 'claude-code:Bash',
      framework: 'claude-code',
      proposed_action: 'rm -rf build',
      agent_reasoning: 'Remove the build output',
      metadata: { tool_name: 'Bash', tool_input: BASH, tool_call_id: 'toolu_01', session_id: 'session-42', cwd: '/home/dev/shop', permission_mode: 'default' },
    });
  });

  it('denies a rejected command with the reviewer\'s notes', async () => {
    const { run } = await reviewed('Bash', BASH, { decision_type: 'reject', notes: 'Keep the build, we ship from it.' });
    expect(answerOf(run)).toMatchObject({ permissionDecision: 'deny', permissionDecisionReason: 'Keep the build, we ship from it.' });
  });

  it('allows a modified Bash command with the edited command as updatedInput', async () => {
    const { run } = await reviewed('Bash', BASH, { decision_type: 'modify', modified_action: 'rm -rf build/tmp' });
    const answer = answerOf(run);
    expect(answer.permissionDecision).toBe('allow');
    expect(answer.updatedInput).toEqual({ command: 'rm -rf build/tmp', description: 'Remove the build output' });
  });

  it('reads a modified tool input back from JSON for other tools, and refuses an edit that is not JSON', async () => {
    const write = { file_path: '/home/dev/shop/.env', content: 'DEBUG=true\n' };
    const edited = { file_path: '/home/dev/shop/.env.local', content: 'DEBUG=true\n' };
    const { run, review } = await reviewed('Write', write, { decision_type: 'modify', modified_action: JSON.stringify(edited) });
    expect(JSON.parse(review.proposed_action)).toEqual(write);
    expect(answerOf(run)).toMatchObject({ permissionDecision: 'allow', updatedInput: edited });

    const garbled = await reviewed('Write', write, { decision_type: 'modify', modified_action: 'write it to .env.local instead' });
    expect(answerOf(garbled.run)).toMatchObject({ permissionDecision: 'deny', permissionDecisionReason: expect.stringContaining('not a JSON object') });
  });

  describe('attaches the files a call names', () => {
    let project: ReturnType<typeof makeTempDir>;
    let outside: ReturnType<typeof makeTempDir>;
    beforeEach(() => {
      project = makeTempDir('greenlight-project-');
      outside = makeTempDir('greenlight-elsewhere-');
      fs.mkdirSync(path.join(project.dir, 'src'));
      fs.writeFileSync(path.join(project.dir, 'src', 'app.ts'), 'export const answer = 41;\n');
      fs.writeFileSync(path.join(project.dir, 'PLAN.md'), '# Plan\n1. Fix the answer\n');
    });
    afterEach(() => {
      project.remove();
      outside.remove();
    });

    async function attachmentsOf(reviewId: number): Promise<Array<{ file_name: string; content_type: string; id: number }>> {
      return (await call(server.url, 'GET', `/reviews/${reviewId}/attachments`)).body.attachments;
    }

    it('the file an Edit changes, as it is now, with --attach files beside it, and says so in the metadata', async () => {
      const edit = { file_path: path.join(project.dir, 'src', 'app.ts'), old_string: '41', new_string: '42' };
      const { run, review } = await reviewed('Edit', edit, { decision_type: 'approve' }, { cwd: project.dir, args: ['--attach', 'PLAN.md'] });
      expect(JSON.parse(run.stdout).hookSpecificOutput.permissionDecision).toBe('allow');

      const attachments = await attachmentsOf(review.id);
      expect(attachments.map((a) => [a.file_name, a.content_type])).toEqual([
        ['PLAN.md', 'text/markdown'],
        ['app.ts', 'text/plain'],
      ]);
      expect(await (await fetch(`${server.url}/attachments/${attachments[1].id}/download`)).text()).toBe('export const answer = 41;\n');
      expect(review.metadata).toMatchObject({ attached_files: ['PLAN.md', path.join('src', 'app.ts')], files_not_attached: [] });
    });

    it('nothing outside the project (a path, or a link that leads out), no directory, nothing past --attach-max-bytes, and says why', async () => {
      fs.writeFileSync(path.join(outside.dir, 'secrets.env'), 'TOKEN=abc\n');
      fs.symlinkSync(path.join(outside.dir, 'secrets.env'), path.join(project.dir, 'innocent.txt'));
      fs.symlinkSync(outside.dir, path.join(project.dir, 'linked-dir'));
      fs.writeFileSync(path.join(project.dir, 'big.log'), 'x'.repeat(2048));
      const cases = [
        [path.join(outside.dir, 'secrets.env'), 'outside the project'],
        ['innocent.txt', 'outside the project'],
        [path.join('linked-dir', 'secrets.env'), 'outside the project'],
        ['src', 'not a regular file'],
        ['big.log', 'larger than 1024 bytes'],
        ['new-file.ts', 'does not exist'],
      ];
      const args = ['--attach-max-bytes', '1024', ...cases.slice(0, -1).flatMap(([file]) => ['--attach', file])];
      const { review } = await reviewed('Write', { file_path: 'new-file.ts', content: 'hello' }, { decision_type: 'reject' }, { cwd: project.dir, args });

      expect(await attachmentsOf(review.id)).toEqual([]);
      expect(review.metadata.attached_files).toEqual([]);
      expect(review.metadata.files_not_attached).toEqual(cases.map(([file, reason]) => ({ path: file, reason })));
    });

    it('reads from $CLAUDE_PROJECT_DIR when Claude Code names one, and attaches nothing with --no-attachments', async () => {
      const sub = path.join(project.dir, 'src');
      const write = { file_path: path.join(project.dir, 'PLAN.md'), content: '# New plan\n' };
      const { review } = await reviewed('Write', write, { decision_type: 'approve' }, { cwd: sub, env: { CLAUDE_PROJECT_DIR: project.dir } });
      expect((await attachmentsOf(review.id)).map((a) => a.file_name)).toEqual(['PLAN.md']);

      const none = await reviewed('Write', write, { decision_type: 'approve' }, { cwd: sub, env: { CLAUDE_PROJECT_DIR: project.dir }, args: ['--no-attachments'] });
      expect(await attachmentsOf(none.review.id)).toEqual([]);
      expect(none.review.metadata).not.toHaveProperty('attached_files');
    });
  });

  it('denies a modified command that was changed between Greenlight and the hook: the receipt names the reviewer\'s command', async () => {
    const proxy = await startRewritingProxy(server.url, (body) => {
      if (body?.decision?.modified_action) body.decision.modified_action = 'rm -rf /';
      return body;
    });
    try {
      const running = runHook(['--api-url', proxy.url, '--wait', '60'], preToolUse('Bash', BASH));
      const reviewId = await firstPending();
      expect((await call(server.url, 'POST', `/reviews/${reviewId}/decide`, { decision_type: 'modify', modified_action: 'rm -rf build/tmp' })).status).toBe(200);
      const answer = answerOf(await running);
      expect(answer).toEqual({
        hookEventName: 'PreToolUse',
        permissionDecision: 'deny',
        permissionDecisionReason: `Not run: Greenlight review #${reviewId} was decided, but the action about to run is not the one the decision was made on.`,
      });
    } finally {
      await proxy.close();
    }
  });

  it('denies when no one decides within --wait', async () => {
    const answer = answerOf(await runHook(['--api-url', server.url, '--wait', '1'], preToolUse('Bash', BASH)));
    expect(answer).toMatchObject({ permissionDecision: 'deny', permissionDecisionReason: expect.stringMatching(/No decision came in Greenlight review #\d+ in time/) });
  });

  it('answers nothing for tools outside --tools, so Claude Code\'s own rules apply, and files no review', async () => {
    const run = await runHook(['--api-url', server.url, '--tools', 'Bash|Write', '--skip', 'Write'], preToolUse('Read', { file_path: '/etc/hosts' }));
    expect(run).toMatchObject({ code: 0, stdout: '' });
    const skipped = await runHook(['--api-url', server.url, '--tools', 'Bash|Write', '--skip', 'Write'], preToolUse('Write', { file_path: 'a', content: 'b' }));
    expect(skipped).toMatchObject({ code: 0, stdout: '' });
    expect((await call(server.url, 'GET', '/reviews')).body.total).toBe(0);
  });

  it('fails closed with deny when Greenlight is down, or asks with --fallback ask', async () => {
    const nowhere = `http://127.0.0.1:${await freePort()}`;
    const denied = answerOf(await runHook(['--api-url', nowhere, '--reach-within', '1'], preToolUse('Bash', BASH)));
    expect(denied).toMatchObject({ permissionDecision: 'deny', permissionDecisionReason: expect.stringContaining('could not be reached') });
    const asked = answerOf(await runHook(['--api-url', nowhere, '--reach-within', '1', '--fallback', 'ask'], preToolUse('Bash', BASH)));
    expect(asked.permissionDecision).toBe('ask');
  });

  it('blocks the call (exit code 2) on input or arguments it cannot use', async () => {
    expect(await runHook(['--api-url', server.url], 'not json')).toMatchObject({ code: 2, stderr: expect.stringContaining('not JSON') });
    expect(await runHook(['--wait', 'soon'], preToolUse('Bash', BASH))).toMatchObject({ code: 2, stderr: expect.stringContaining('--wait') });
    const unknownAgent = await runNode([CLI, 'hook', 'codex'], { cwd: server.dataDir });
    expect(unknownAgent).toMatchObject({ code: 2, stderr: expect.stringContaining('unknown agent') });
    const help = await runHook(['--help'], '');
    expect(help).toMatchObject({ code: 0, stdout: expect.stringContaining('Usage: greenlight hook claude-code') });
  });
});
