import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort, runCli, startCli, stopProgram } from '../support/cli';
import { call } from '../support/server';
import { makeTempDir } from '../support/temp';

let temp: ReturnType<typeof makeTempDir>;
beforeAll(() => {
  temp = makeTempDir('greenlight-hosted-cli-');
});
afterAll(() => temp?.remove());

describe('the hosted edition from the command line', () => {
  it('is set up with init --edition hosted and org create, and the printed key and invitation link open the API', async () => {
    const init = await runCli(['init', '--edition', 'hosted'], { cwd: temp.dir });
    expect(init.code).toBe(0);
    expect(fs.readFileSync(path.join(temp.dir, 'greenlight.yaml'), 'utf8')).toMatch(/\nedition: hosted\n/);

    const created = await runCli(['org', 'create', '--name', 'Acme Support'], { cwd: temp.dir });
    expect(created.stderr).toBe('');
    expect(created.code).toBe(0);
    expect(created.stdout).toMatch(/^created organization 1 \(Acme Support\)\n/);
    const key = /^ {2}(gl_\S+)$/m.exec(created.stdout)?.[1] as string;
    expect(key).toBeDefined();

    const withAdmin = await runCli(['org', 'create', '--name', 'Globex', '--admin-email', 'Dana@Globex.example'], { cwd: temp.dir });
    expect(withAdmin.code).toBe(0);
    expect(withAdmin.stdout).toMatch(/\nadded dana@globex\.example as its admin; they set a password and sign in at/);
    const invitation = /^ {2}(http:\/\/127\.0\.0\.1:8501\/#\/invitation\/\S+)$/m.exec(withAdmin.stdout)?.[1] as string;
    expect(invitation).toBeDefined();

    const env = { GREENLIGHT_API_PORT: String(await freePort()) };
    const running = await startCli(['--api-only'], { cwd: temp.dir, env });
    try {
      const organization = await call(running.url, 'GET', '/organizations/1', undefined, { headers: { authorization: `Bearer ${key}` } });
      expect(organization.status).toBe(200);
      expect(organization.body.name).toBe('Acme Support');
      expect((await call(running.url, 'GET', '/reviews')).status).toBe(401);

      const token = new URL(invitation).hash.replace('#/invitation/', '');
      const signedIn = await call(running.url, 'POST', '/invitations/accept', { token, password: 'correct horse battery staple' });
      expect(signedIn.status).toBe(201);
      expect(signedIn.body).toMatchObject({ user: { email: 'dana@globex.example', name: 'Dana', role: 'admin' }, organization: { id: 2, name: 'Globex' } });

      const status = await runCli(['status'], { cwd: temp.dir, env });
      expect(status.stdout).toMatch(/\n {2}edition {3}ok {4}hosted\n/);
      expect(status.stdout).toMatch(/authentication organizations' API keys/);
    } finally {
      await stopProgram(running);
    }
  });

  it('refuses org create outside the hosted edition, saying how to switch', async () => {
    const dir = path.join(temp.dir, 'self-hosted');
    fs.mkdirSync(dir);
    const refused = await runCli(['org', 'create', '--name', 'Acme'], { cwd: dir });
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(/^greenlight: organizations belong to the hosted edition: set edition: hosted/);
  });
});
