import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../server/config/load';
import { ConfigError, defaultConfig } from '../../server/config/settings';
import { configTemplate } from '../../server/config/template';
import { makeTempDir } from '../support/temp';

let temp: ReturnType<typeof makeTempDir>;
beforeEach(() => {
  temp = makeTempDir('greenlight-config-');
});
afterEach(() => temp.remove());

function writeConfig(content: string, name = 'greenlight.yaml'): string {
  const file = path.join(temp.dir, name);
  fs.writeFileSync(file, content);
  return file;
}

describe('loadConfig', () => {
  it('uses the documented defaults when there is no file', () => {
    const { config, file } = loadConfig({ cwd: temp.dir, env: {} });
    expect(file).toBeNull();
    expect(config).toMatchObject({ api_host: '127.0.0.1', api_port: 8000, dashboard_port: 8501, blocking_timeout_seconds: 300 });
    expect(config.data_dir).toBe(path.join(temp.dir, 'greenlight-data'));
    expect(config.database_url).toBe(`sqlite:${path.join(temp.dir, 'greenlight-data', 'greenlight.db')}`);
  });

  it('reads ./greenlight.yaml and resolves its relative paths against the file', () => {
    const sub = path.join(temp.dir, 'conf');
    fs.mkdirSync(sub);
    const file = path.join(sub, 'custom.yaml');
    fs.writeFileSync(file, 'api_port: 9001\ndata_dir: ./state\n');
    const { config } = loadConfig({ cwd: temp.dir, env: {}, file });
    expect(config.api_port).toBe(9001);
    expect(config.data_dir).toBe(path.join(sub, 'state'));
  });

  it('layers defaults < file < environment < flags', () => {
    writeConfig('api_port: 9001\nblocking_timeout_seconds: 60\napi_host: 0.0.0.0\n');
    const { config } = loadConfig({
      cwd: temp.dir,
      env: { GREENLIGHT_API_PORT: '9002', GREENLIGHT_BLOCKING_TIMEOUT_SECONDS: '30' },
      flags: { api_port: '9003' },
    });
    expect(config).toMatchObject({ api_port: 9003, blocking_timeout_seconds: 30, api_host: '0.0.0.0' });
  });

  it('resolves a data_dir from the environment against the working directory', () => {
    writeConfig('data_dir: ./from-file\n');
    const { config } = loadConfig({ cwd: temp.dir, env: { GREENLIGHT_DATA_DIR: 'from-env' } });
    expect(config.data_dir).toBe(path.join(temp.dir, 'from-env'));
  });

  it('accepts sqlite: database URLs', () => {
    const { config } = loadConfig({ cwd: temp.dir, env: { GREENLIGHT_DATABASE_URL: 'sqlite:db/x.db' } });
    expect(config.database_url).toBe(`sqlite:${path.join(temp.dir, 'db', 'x.db')}`);
  });

  it.each(['postgres://greenlight:s%40cret@db.internal:5432/greenlight', 'postgresql://db.internal/greenlight?sslmode=require'])(
    'accepts the PostgreSQL URL %s as it is',
    (url) => {
      expect(loadConfig({ cwd: temp.dir, env: { GREENLIGHT_DATABASE_URL: url } }).config.database_url).toBe(url);
    },
  );

  it.each([
    ['api_port: 70000\n', /^api_port must be an integer from 1 to 65535 \(got 70000 from greenlight\.yaml\)$/],
    ['api_port: "8000"\n', /^api_port must be an integer/],
    ['blocking_timeout_seconds: 0\n', /^blocking_timeout_seconds must be an integer from 1/],
    ['api_host: ""\n', /^api_host must be a non-empty string/],
    ['api_prot: 8000\n', /^unknown setting "api_prot" in greenlight\.yaml; known settings: edition, operator_key, api_host, /],
    ['database_url: postgres://x\n', /^database_url must name a host and a database: postgres:\/\/user:password@host:5432\/database$/],
    ['database_url: mysql://x/y\n', /^database_url must be empty, sqlite:<path to a database file> or postgres:\/\/user:password@host:5432\/database/],
    ['api_port: [1\n', /^greenlight\.yaml is not valid YAML \(line \d+\): Flow sequence/],
    ['- just\n- a list\n', /^greenlight\.yaml must be a mapping/],
    ['edition: cloud\n', /^edition must be one of self-hosted, hosted \(got "cloud" from greenlight\.yaml\)$/],
    ['edition: hosted\noperator_key: short\n', /^operator_key must be at least 32 characters/],
    ['edition: hosted\nenable_auth: true\napi_key: 0123456789abcdef0123\n', /^enable_auth belongs to the self-hosted edition/],
    ['webhooks:\n  - { url: "https://h.example/x", secret: "not-a-secret" }\n', /^webhooks\[0\]\.secret must be whsec_ and the base64 of at least 24 random bytes/],
    ['webhooks:\n  - { url: "http://h.example/x", secret: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw" }\n', /^webhooks\[0\]\.url must be an https:\/\/ URL \(or set webhook_allow_http: true\)$/],
    ['webhooks:\n  - { url: "https://h.example/x", secret: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", events: [review.opened] }\n', /^webhooks\[0\]\.events must be a list of review\.created/],
    ['edition: hosted\nwebhooks:\n  - { url: "https://h.example/x", secret: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw" }\n', /^webhooks belongs to the self-hosted edition/],
    ['webhook_retry_schedule: [5, "soon"]\n', /^webhook_retry_schedule\[1\] must be a duration/],
    ['trusted_proxies: [10.0.0.0/8, proxy.internal]\n', /^trusted_proxies must be a list of IP addresses, CIDR ranges .* \(got "proxy\.internal" from greenlight\.yaml\)$/],
    ['trusted_proxies: [10.0.0.0/33]\n', /^trusted_proxies must be a list .* \(got "10\.0\.0\.0\/33" from greenlight\.yaml\)$/],
    ['trusted_proxies: 10.0.0.1\n', /^trusted_proxies must be a list .* \(got "10\.0\.0\.1" from greenlight\.yaml\)$/],
  ])('refuses %j with one clear line naming the key', (content, message) => {
    writeConfig(content);
    expect(() => loadConfig({ cwd: temp.dir, env: {} })).toThrowError(message);
    try {
      loadConfig({ cwd: temp.dir, env: {} });
    } catch (error) {
      expect(error).toBeInstanceOf(ConfigError);
      expect((error as Error).message).not.toContain('\n');
    }
  });

  it('believes X-Forwarded-For from loopback unless told otherwise, and takes ranges separated by commas from the environment', () => {
    expect(loadConfig({ cwd: temp.dir, env: {} }).config.trusted_proxies).toEqual(['loopback']);
    const { config } = loadConfig({ cwd: temp.dir, env: { GREENLIGHT_TRUSTED_PROXIES: '10.0.0.0/8, FD00::/8 ,192.0.2.7' } });
    expect(config.trusted_proxies).toEqual(['10.0.0.0/8', 'fd00::/8', '192.0.2.7']);
    expect(() => loadConfig({ cwd: temp.dir, env: { GREENLIGHT_TRUSTED_PROXIES: 'loopback,10.0.0.0/8/8' } })).toThrowError(
      /^trusted_proxies must be .* \(got "10\.0\.0\.0\/8\/8" from GREENLIGHT_TRUSTED_PROXIES\)$/,
    );
  });

  it('names the environment variable that holds a bad value', () => {
    expect(() => loadConfig({ cwd: temp.dir, env: { GREENLIGHT_API_PORT: 'eighty' } })).toThrowError(
      'api_port must be an integer from 1 to 65535 (got "eighty" from GREENLIGHT_API_PORT)',
    );
  });

  it('refuses an explicit config file that does not exist', () => {
    expect(() => loadConfig({ cwd: temp.dir, env: {}, file: 'missing.yaml' })).toThrowError(/^config file not found: /);
  });

  it('treats an empty file as all defaults', () => {
    writeConfig('# nothing yet\n');
    expect(loadConfig({ cwd: temp.dir, env: {} }).config.api_port).toBe(defaultConfig().api_port);
  });
});

describe('configTemplate', () => {
  it('loads back to the defaults, with the example policy valid and switched off, and comments every setting', () => {
    writeConfig(configTemplate());
    const { config } = loadConfig({ cwd: temp.dir, env: {} });
    const defaults = { ...defaultConfig(), data_dir: path.join(temp.dir, 'greenlight-data') };
    const { routing, ...rest } = config;
    expect(rest).toEqual({ ...defaults, routing: undefined, database_url: rest.database_url });
    expect(routing.enabled).toBe(false);
    expect(routing.rules.map((rule) => rule.name)).toEqual(['confident-tagging', 'large-refunds']);
    expect(routing.expirySeconds).toEqual({ critical: 900, high: 3600, medium: 86400, low: 604800 });
    for (const key of Object.keys(defaultConfig())) {
      expect(configTemplate()).toMatch(new RegExp(`# .+\\n${key}:`));
    }
  });
});
