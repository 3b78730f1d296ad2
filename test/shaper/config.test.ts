/**
 * The configuration of shapers and limits: ejabberd.yml's own `shaper`/`shaper_rules` sections and the
 * listener's `shaper` option load unchanged, with the order of a rule's entries as written; mistakes (a
 * negative rate, an unknown shaper, rule or ACL, a max_user_sessions that is not a number) stop the server
 * with the file, line, option and value named, and reload_config refuses them and keeps running as before.
 */
import { expect } from 'chai';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { ConfigError, Server } from '@service/kernel';
import { baseConfig, memoryLogger, TestServer, type RawConfig } from '../support/server.js';

async function start(text: string): Promise<{ server?: Server; error?: ConfigError; dir: string }> {
  const dir = await mkdtemp(join(tmpdir(), 'service-shaper-'));
  const file = join(dir, 'service.yml');
  await writeFile(file, text);
  try {
    return { server: await Server.start({ configFile: file, logger: memoryLogger([]) }), dir };
  } catch (err) {
    expect(err).to.be.instanceOf(ConfigError);
    return { error: err as ConfigError, dir };
  }
}

async function configError(text: string): Promise<string> {
  const { server, error, dir } = await start(text);
  await server?.shutdown();
  await rm(dir, { recursive: true, force: true });
  if (!error) throw new Error('the configuration was accepted');
  return error.message;
}

const valid = (): RawConfig => ({ ...baseConfig(), data_dir: '/tmp/never-used' });
const c2s = (options: Record<string, unknown> = {}) => ({ port: 0, ip: '127.0.0.1', module: 'service_c2s', starttls_required: false, ...options });
const withC2s = (extra: RawConfig, listener: Record<string, unknown> = {}): RawConfig => ({ ...valid(), listen: [...(valid().listen as unknown[]), c2s(listener)], ...extra });

describe('shaper configuration', function () {
  this.timeout(30_000);

  it("loads ejabberd.yml's shaper, shaper_rules and listener shaper as written, entries in the file's order", async () => {
    const dir = await mkdtemp(join(tmpdir(), 'service-shaper-'));
    // The sections as ejabberd's example configuration writes them (a map whose keys are numbers included).
    const text = `${stringify({ ...baseConfig(), data_dir: join(dir, 'data'), listen: [...(baseConfig().listen as unknown[]), c2s({ shaper: 'c2s_shaper', max_connection_rate: 30 })] })}
shaper:
  normal:
    rate: 3000
    burst_size: 20000
  fast: 100000
shaper_rules:
  max_user_sessions: 10
  max_user_offline_messages:
    5000: admin
    100: all
  c2s_shaper:
    none: admin
    normal: all
  s2s_shaper: fast
  listed:
    - 7: admin
    - 3
`;
    await writeFile(join(dir, 'service.yml'), text);
    const server = await Server.start({ configFile: join(dir, 'service.yml'), logger: memoryLogger([]) });
    try {
      const access = server.config.access;
      const admin = { user: 'admin', server: 'localhost', ip: '127.0.0.1' };
      const alice = { user: 'alice', server: 'localhost', ip: '127.0.0.1' };
      expect(access.shaperRuleValue('max_user_offline_messages', admin)).to.equal(5000);
      expect(access.shaperRuleValue('max_user_offline_messages', alice)).to.equal(100);
      expect(access.shaperRuleValue('listed', admin)).to.equal(7);
      expect(access.shaperRuleValue('listed', alice)).to.equal(3);
      expect(access.maxUserSessions(alice)).to.equal(10);
      expect(access.shaperFor('c2s_shaper', admin)).to.equal(undefined);
      expect(access.shaperFor('c2s_shaper', alice)).to.deep.equal({ rate: 3000, burst: 20000 });
      // Before authentication only the address is known: `admin` does not match it, `all` does.
      expect(access.shaperFor('c2s_shaper', { ip: '127.0.0.1' })).to.deep.equal({ rate: 3000, burst: 20000 });
      expect(access.shaperFor('s2s_shaper', alice)).to.deep.equal({ rate: 100000, burst: 100000 });
      expect(access.shaperFor('fast', alice), 'a shaper by name').to.deep.equal({ rate: 100000, burst: 100000 });
      expect(access.shaperFor('none', alice)).to.equal(undefined);
    } finally {
      await server.shutdown();
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('has no limits when nothing is configured (max_user_sessions defaults to infinity)', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'service-shaper-'));
    await writeFile(join(dir, 'service.yml'), stringify({ ...baseConfig(), data_dir: join(dir, 'data') }));
    const server = await Server.start({ configFile: join(dir, 'service.yml'), logger: memoryLogger([]) });
    try {
      expect(server.config.access.maxUserSessions({ user: 'alice', server: 'localhost' })).to.equal(Infinity);
    } finally {
      await server.shutdown();
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('refuses a rate or burst that is not a positive integer, and unknown shaper options', async () => {
    const negative = await configError(stringify({ ...valid(), shaper: { normal: -5 } }));
    expect(negative).to.match(/service\.yml:\d+:\d+: shaper\.normal: expected a rate in bytes per second, a positive integer, got -5/);
    const zeroBurst = await configError(stringify({ ...valid(), shaper: { fast: { rate: 1000, burst_size: 0 } } }));
    expect(zeroBurst).to.match(/shaper\.fast\.burst_size: expected a burst size in bytes, a positive integer, got 0/);
    const typo = await configError(stringify({ ...valid(), shaper: { fast: { rat: 1000 } } }));
    expect(typo).to.match(/shaper\.fast\.rat: unknown option 'rat'; expected rate and burst_size/);
    expect(typo).to.match(/shaper\.fast: rate is required/);
    const text = await configError(stringify({ ...valid(), shaper: { normal: 'fast' } }));
    expect(text).to.match(/shaper\.normal: expected a rate in bytes per second, a positive integer, got "fast"/);
    const reserved = await configError(stringify({ ...valid(), shaper: { none: 1000 } }));
    expect(reserved).to.match(/shaper\.none: 'none' is built in \(no shaper\) and cannot be defined/);
  });

  it('refuses rules naming a shaper, an ACL or a value that does not exist', async () => {
    const unknownShaper = await configError(stringify({ ...valid(), shaper: { normal: 1000 }, shaper_rules: { c2s_shaper: { normall: 'all' } } }));
    expect(unknownShaper).to.match(/shaper_rules\.c2s_shaper\.normall: unknown shaper 'normall': did you mean 'normal'\?; defined in shaper: normal/);
    const bare = await configError(stringify({ ...valid(), shaper_rules: { c2s_shaper: 'slow' } }));
    expect(bare).to.match(/shaper_rules\.c2s_shaper: unknown shaper 'slow'/);
    const unknownAcl = await configError(stringify({ ...valid(), shaper: { normal: 1000 }, shaper_rules: { c2s_shaper: { none: 'admins', normal: 'all' } } }));
    expect(unknownAcl).to.match(/shaper_rules\.c2s_shaper\.none: ACL 'admins' is not defined in acl: did you mean 'admin'\?/);
    const sessions = await configError(stringify({ ...valid(), shaper: { normal: 1000 }, shaper_rules: { max_user_sessions: 'normal' } }));
    expect(sessions).to.match(/shaper_rules\.max_user_sessions: max_user_sessions takes a number of sessions or infinity, got 'normal'/);
    const negative = await configError(stringify({ ...valid(), shaper_rules: { max_user_sessions: -1 } }));
    expect(negative).to.match(/shaper_rules\.max_user_sessions: expected a number, infinity, none or a shaper name, got -1/);
    const empty = await configError(stringify({ ...valid(), shaper_rules: { c2s_shaper: [] } }));
    expect(empty).to.match(/shaper_rules\.c2s_shaper: must not be empty/);
  });

  it("refuses a listener's shaper that names nothing defined, and a bad max_connection_rate", async () => {
    const unknown = await configError(stringify(withC2s({ shaper: { normal: 1000 }, shaper_rules: { c2s_shaper: 'normal' } }, { shaper: 'c2s_shapr' })));
    expect(unknown).to.match(/service\.yml:\d+:\d+: listen\[1\]\.shaper: unknown shaper or shaper rule 'c2s_shapr': did you mean 'c2s_shaper'\?; expected one of none, c2s_shaper, normal/);
    const onHttp = await configError(stringify({ ...valid(), listen: [{ ...(valid().listen as Array<Record<string, unknown>>)[0], shaper: 'nope' }] }));
    expect(onHttp).to.match(/listen\[0\]\.shaper: unknown shaper or shaper rule 'nope'/);
    const rate = await configError(stringify(withC2s({}, { max_connection_rate: 0 })));
    expect(rate).to.match(/listen\[1\]\.max_connection_rate/);
  });

  it('reload_config refuses a bad shaper with 422 and keeps the running shapers', async () => {
    const config = withC2s({ shaper: { normal: 1000 }, shaper_rules: { c2s_shaper: { none: 'admin', normal: 'all' }, max_user_sessions: 4 } }, { shaper: 'c2s_shaper' });
    delete config.data_dir;
    const t = await TestServer.start(config);
    try {
      await t.bootstrapAdmin();
      await t.writeConfig({ ...config, shaper: { normal: -1000 } });
      const res = await t.api('reload_config', {}, { basic: 'admin@localhost:adminpass' });
      expect(res.status).to.equal(422);
      expect(res.body.message).to.match(/shaper\.normal: expected a rate in bytes per second, a positive integer, got -1000/);
      const access = t.server.config.access;
      expect(access.shaperFor('c2s_shaper', { user: 'alice', server: 'localhost' })).to.deep.equal({ rate: 1000, burst: 1000 });
      expect(access.maxUserSessions({ user: 'alice', server: 'localhost' })).to.equal(4);
    } finally {
      await t.stop();
    }
  });
});
