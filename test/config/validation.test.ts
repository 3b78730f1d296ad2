/**
 * Configuration errors name the file, the line, the option path, what was expected and a did-you-mean;
 * the server refuses to start with them, and reload_config refuses to apply them.
 */
import { expect } from 'chai';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { ConfigError, Server } from '@service/kernel';
import { baseConfig, memoryLogger, TestServer, type RawConfig } from '../support/server.js';

async function configError(text: string): Promise<ConfigError> {
  const dir = await mkdtemp(join(tmpdir(), 'service-config-'));
  const file = join(dir, 'service.yml');
  await writeFile(file, text);
  try {
    const server = await Server.start({ configFile: file, logger: memoryLogger([]) });
    await server.shutdown();
  } catch (err) {
    expect(err).to.be.instanceOf(ConfigError);
    return err as ConfigError;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
  throw new Error('the configuration was accepted');
}

const valid = (): RawConfig => ({ ...baseConfig(), data_dir: '/tmp/never-used' });

describe('configuration validation', () => {
  it('names an unknown option with its line and a did-you-mean', async () => {
    const err = await configError('hosts: [localhost]\nlogleve: info\n');
    expect(err.message).to.match(/service\.yml:2:1: logleve: unknown option: did you mean 'loglevel'\?/);
  });

  it('checks host_config: hosts it names must be served, and only per-host options are allowed', async () => {
    const unknownHost = await configError(stringify({ ...valid(), host_config: { 'example.net': { disable_sasl_mechanisms: ['X-OAUTH2'] } } }));
    expect(unknownHost.message).to.match(/host_config\."example\.net": 'example\.net' is not one of the hosts/);
    const notPerHost = await configError(stringify({ ...valid(), host_config: { localhost: { loglevel: 'debug' } } }));
    expect(notPerHost.message).to.match(/host_config\.localhost\.loglevel: unknown option/);
  });

  it('names a wrong type with what was expected and what was given', async () => {
    const err = await configError(stringify({ ...valid(), listen: [{ port: 'abc', module: 'service_http' }] }));
    expect(err.message).to.match(/service\.yml:\d+:\d+: listen\[0\]\.port: expected an integer between 0 and 65535, got "abc"/);
  });

  it('points ejabberd listener names to ours', async () => {
    const err = await configError(stringify({ ...valid(), listen: [{ port: 5280, module: 'ejabberd_http' }] }));
    expect(err.message).to.match(/listen\[0\]\.module: expected one of service_c2s, service_http, service_xmlrpc, got "ejabberd_http": did you mean 'service_http'\?/);
  });

  it("checks a module's listener kind against the module's declaration, and enables the module", async () => {
    const err = await configError(stringify({ ...valid(), listen: [{ port: 4560, module: 'service_xmlrpc', max_body_sise: 10, request_timeout: 0 }] }));
    expect(err.message).to.match(/listen\[0\]\.max_body_sise: unknown option: did you mean 'max_body_size'\?/);
    expect(err.message).to.match(/listen\[0\]\.request_timeout: expected an integer between 1 and 3600, got 0/);
    const config = baseConfig();
    (config.listen as unknown[]).push({ port: 0, ip: '127.0.0.1', module: 'service_xmlrpc' });
    const t = await TestServer.start(config);
    try {
      const listener = t.server.config.listen.find((l) => l.module === 'service_xmlrpc');
      expect(listener).to.include({ max_body_size: 1048576, request_timeout: 30 });
      expect(t.server.config.impliedModules).to.include('service_xmlrpc');
      expect(t.server.portOf('service_xmlrpc')).to.be.above(0);
    } finally {
      await t.stop();
    }
  });

  it('names an unknown module with a did-you-mean', async () => {
    const err = await configError(stringify({ ...valid(), modules: { mod_http_apii: {} } }));
    expect(err.message).to.match(/modules\.mod_http_apii: unknown module: did you mean 'mod_http_api'\?/);
  });

  it('names an unknown request handler', async () => {
    const config = valid();
    (config.listen as any[])[0].request_handlers['/x'] = 'mod_nothing';
    const err = await configError(stringify(config));
    expect(err.message).to.match(/listen\[0\]\.request_handlers\."\/x": unknown request handler 'mod_nothing'/);
  });

  it('checks enum values, with a suggestion', async () => {
    const err = await configError(stringify({ ...valid(), sql_type: 'postgres', auth_password_format: 'scrum' }));
    expect(err.message).to.match(/sql_type: expected one of 'sqlite', 'mysql', 'pgsql', got "postgres"/);
    expect(err.message).to.match(/auth_password_format: expected one of 'plain', 'scram', got "scrum": did you mean 'scram'\?/);
    expect(err.issues).to.have.length(2);
  });

  it('requires hosts', async () => {
    const err = await configError('loglevel: info\n');
    expect(err.message).to.match(/hosts: is required: expected a list, each a domain name like example.org/);
  });

  it('checks ACL rules and references between acl, access_rules and api_permissions', async () => {
    const err = await configError(
      stringify({
        ...valid(),
        acl: { admin: { usr: 'admin@localhost' }, net: { ip: '300.1.1.1/8' } },
        access_rules: { local: { allow: 'locals' } },
        api_permissions: { g: { who: { access: 'locall' }, what: '*' } },
      }),
    );
    expect(err.message).to.match(/acl\.admin\.usr: unknown ACL rule type: did you mean 'user'\?/);
    expect(err.message).to.match(/acl\.net\.ip: '300\.1\.1\.1\/8' is not an IP address or network/);
    const refs = await configError(
      stringify({
        ...valid(),
        access_rules: { local: { allow: 'locals' } },
        api_permissions: { g: { who: { access: 'locall' }, what: '*' } },
      }),
    );
    expect(refs.message).to.match(/access_rules\.local\.allow: ACL 'locals' is not defined in acl/);
    expect(refs.message).to.match(/api_permissions\.g\.who\.access: access rule 'locall' is not defined in access_rules: did you mean 'local'\?/);
  });

  it('checks api_permissions groups: from, what and unknown keys', async () => {
    const err = await configError(
      stringify({ ...valid(), api_permissions: { g: { from: 'ejabberd_ctl', who: 'admin', what: ['!!stop', '[tag:]'], whom: 1 } } }),
    );
    expect(err.message).to.match(/api_permissions\.g\.from: unknown frontend 'ejabberd_ctl': did you mean 'service_ctl'\?/);
    expect(err.message).to.match(/double negation in '!!stop'/);
    expect(err.message).to.match(/invalid tag pattern '\[tag:\]'/);
    expect(err.message).to.match(/api_permissions\.g\.whom: unknown option/);
  });

  it('reports YAML syntax errors with their position, and refuses duplicate keys', async () => {
    expect((await configError('hosts: [localhost\n')).message).to.match(/service\.yml:\d+:\d+: YAML syntax/);
    expect((await configError('hosts: [a]\nhosts: [b]\n')).message).to.match(/YAML syntax: .*[Uu]nique|duplicate/i);
  });

  it('defeats alias bombs', async () => {
    const bomb = ['hosts: [localhost]', 'a: &a [x, x, x, x, x, x, x, x, x, x]', 'b: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]', 'c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]', 'd: [*c, *c, *c, *c, *c, *c, *c, *c, *c, *c]'].join('\n');
    expect((await configError(bomb)).message).to.match(/[Aa]lias/);
  });

  describe('reload_config', () => {
    let t: TestServer;
    before(async () => {
      t = await TestServer.start();
      await t.bootstrapAdmin();
    });
    after(() => t.stop());

    it('refuses an invalid file with 422, listing the problems, and keeps the running configuration', async () => {
      await t.writeConfig({ ...baseConfig(), loglevl: 'debug', hosts: ['localhost', 'other.test'], modules: { mod_http_api: {}, mod_nope: {} } });
      const res = await t.api('reload_config', {}, { basic: 'admin@localhost:adminpass' });
      expect(res.status).to.equal(422);
      expect(res.body.message).to.match(/the configuration was not reloaded: invalid configuration \(2 problems\)/);
      expect(res.body.message).to.match(/loglevl: unknown option: did you mean 'loglevel'\?/);
      expect(res.body.message).to.match(/modules\.mod_nope: unknown module/);
      // Still the old hosts, still serving.
      expect((await t.api('registered_vhosts', {}, { basic: 'admin@localhost:adminpass' })).body).to.deep.equal(['example.com', 'localhost']);
    });

    it('applies a valid file: new hosts and permissions at once', async () => {
      const config = baseConfig();
      config.hosts = ['localhost', 'other.test'];
      config.api_permissions = { 'public commands': { who: { acl: 'loopback' }, what: ['status', 'registered_vhosts'] } };
      await t.writeConfig(config);
      expect((await t.api('reload_config', {}, { basic: 'admin@localhost:adminpass' })).body).to.equal(0);
      expect((await t.api('registered_vhosts')).body).to.deep.equal(['localhost', 'other.test']);
      expect((await t.api('registered_users', { host: 'localhost' }, { basic: 'admin@localhost:adminpass' })).status).to.equal(403);
    });
  });
});
