/**
 * convert_to_yaml on a running server with clients connected: an ejabberd 2.1.x-style ejabberd.cfg
 * (test/fixtures/ejabberd-cfg/) becomes YAML whose header names every option that did not convert, with its
 * line; a second real server then starts from the result (its ports replaced by free ones, its certificate by
 * the test one) and a client logs in to it. Bad calls (a syntax error, a missing file, the running
 * configuration as output) fail with the reason and write nothing, while chat goes on.
 */
import { expect } from 'chai';
import { access, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parse, stringify } from 'yaml';
import { Server } from '@service/kernel';
import { ADMIN } from '../support/admin-api.js';
import { servicectl } from '../support/cli.js';
import { memoryLogger, TestServer } from '../support/server.js';
import { expectChatBothWays, login, loginTo, stopAll, TLS_FIXTURE, xml, xmppConfig, type Client } from '../support/xmpp.js';
import { clientsOnline } from './clients-online.js';

const FIXTURE = new URL('../fixtures/ejabberd-cfg/ejabberd-2.1.cfg', import.meta.url).pathname;

const exists = (path: string) =>
  access(path).then(
    () => true,
    () => false,
  );

describe('convert_to_yaml', () => {
  let t: TestServer;
  let alice: Client | undefined;
  let bob: Client | undefined;
  const call = (args: Record<string, unknown>) => t.api('convert_to_yaml', args, { basic: ADMIN });

  before(async () => {
    t = await TestServer.start(xmppConfig({ mod_roster: {}, mod_presence: {} }));
    await t.bootstrapAdmin();
    ({ alice, bob } = await clientsOnline(t));
  });

  after(async () => {
    await stopAll(alice, bob);
    await t?.stop();
  });

  it('converts ejabberd 2.1 terms, names every option it cannot map with its line, and the result starts a server', async function () {
    this.timeout(120_000);
    const out = join(t.dir, 'converted.yml');
    const res = await call({ in: FIXTURE, out });
    expect(res.status, res.text).to.equal(200);
    expect(res.body).to.equal(0);
    const text = await readFile(out, 'utf8');
    const header = text.slice(0, text.indexOf('\n\n'));
    // Named, with the line of the old file where each is written.
    for (const expected of [
      'line 12: override_acls',
      'line 28: {watchdog_admins, ["bob@example.com"]}',
      'line 47: {shaper, c2s_shaper}',
      "line 60: {5269, ejabberd_s2s_in",
      "line 77: web_admin -- listener option 'web_admin' of ejabberd_http",
      'line 129: {shaper, normal, {maxrate, 1000}}',
      'line 136: {max_fsm_queue, 1000}',
      'line 169: {access, max_user_sessions, [{10, all}]}',
      'line 214: {language, "en"}',
      "{mod_irc, []} -- module mod_irc does not exist here",
      "{ignore_pep_from_offline, true} -- mod_pubsub option 'ignore_pep_from_offline' has no equivalent here",
    ]) {
      expect(header).to.contain(expected);
    }
    const converted = parse(text);
    expect(converted.hosts).to.deep.equal(['example.com', 'chat.example.com']);
    expect(converted.loglevel).to.equal('info');
    expect(converted.auth_method).to.equal('internal');
    expect(converted.acl.admin).to.deep.equal([{ user: 'admin@example.com' }, { user: 'ops@chat.example.com' }]);
    expect(converted.access_rules.c2s).to.deep.equal([{ deny: 'blocked' }, { allow: 'all' }]);
    expect(converted.listen.map((l: { port: number; module: string }) => `${l.port} ${l.module}`)).to.deep.equal(['5222 service_c2s', '5223 service_c2s', '5280 service_http', '4560 service_xmlrpc']);
    expect(converted.listen[0]).to.include({ access: 'c2s', max_stanza_size: 65536, starttls: true, starttls_required: false });
    expect(converted.listen[2]).to.deep.include({ ip: '127.0.0.1', request_handlers: { '/api': 'mod_http_api' } });
    expect(converted.modules.mod_muc).to.deep.equal({ access_create: 'muc_create', access_persistent: 'muc_create', access_admin: 'muc_admin' });
    expect(converted.modules.mod_pubsub).to.deep.equal({ access_createnode: 'pubsub_createnode' });
    expect(converted.modules).to.have.property('mod_vcard'); // mod_vcard_odbc: the storage is configured, not the module
    expect(converted.modules).to.not.have.property('mod_irc');
    expect(t.logged((l) => /convert_to_yaml: not converted: line 129: \{shaper, normal/.test(l.msg ?? ''))).to.have.length(1);

    // The result loads: a real server starts from it, on free ports, and serves a client.
    for (const listener of converted.listen) {
      listener.port = 0;
      if (listener.certfile) listener.certfile = TLS_FIXTURE;
    }
    expect(converted.certfiles).to.deep.equal(['/etc/ejabberd/ejabberd.pem']);
    converted.certfiles = [TLS_FIXTURE];
    converted.data_dir = join(t.dir, 'converted-data');
    const file = join(t.dir, 'converted-run.yml');
    await writeFile(file, text.slice(0, text.indexOf('\n\n') + 2) + stringify(converted));
    const logs: Array<Record<string, any>> = [];
    const second = await Server.start({ configFile: file, logger: memoryLogger(logs), onExit: () => {} });
    let juliet: Client | undefined;
    try {
      await second.services.accounts.register('juliet', 'example.com', 'balcony');
      const port = second.portOf('service_c2s')!;
      juliet = await loginTo(`xmpp://127.0.0.1:${port}`, { user: 'juliet', host: 'example.com', password: 'balcony' });
    } finally {
      await stopAll(juliet);
      await second.shutdown();
    }
    await expectChatBothWays(alice!, 'alice@localhost', bob!);
  });

  it('fails on a syntax error with its file and line, and writes nothing', async () => {
    const bad = join(t.dir, 'bad.cfg');
    await writeFile(bad, '{hosts, ["a.example"]}.\n\n{listen, [{5222, ejabberd_c2s, [starttls}]}.\n');
    const out = join(t.dir, 'never.yml');
    const res = await call({ in: bad, out });
    expect(res.status).to.equal(422);
    expect(res.body.message).to.match(/bad\.cfg:3:\d+: expected ',' or '\]'/);
    expect(await exists(out)).to.equal(false);
  });

  it('refuses a missing input, an empty path, and the running configuration as output', async () => {
    const missing = await call({ in: join(t.dir, 'nothing.cfg'), out: join(t.dir, 'x.yml') });
    expect(missing.status).to.equal(422);
    expect(missing.body.message).to.contain('no such file or directory');
    const empty = await call({ in: '', out: join(t.dir, 'x.yml') });
    expect(empty.status).to.equal(400);
    const before = await readFile(t.configFile, 'utf8');
    const running = await call({ in: FIXTURE, out: t.configFile });
    expect(running.status).to.equal(400);
    expect(running.body.message).to.contain('running configuration');
    expect(await readFile(t.configFile, 'utf8')).to.equal(before);
    expect(await exists(join(t.dir, 'x.yml'))).to.equal(false);
    await expectChatBothWays(alice!, 'alice@localhost', bob!);
  });

  it('reads a relative input path against data_dir', async () => {
    const dataDir = t.server.services.config().dataDir;
    await writeFile(join(dataDir, 'small.cfg'), '% a comment\n{hosts, [<<"b.example">>]}.\n{loglevel, 5}.\n{acl, admin, {user, "root"}}.\n');
    const res = await call({ in: 'small.cfg', out: 'small.yml' });
    expect(res.status, res.text).to.equal(200);
    const text = await readFile(join(dataDir, 'small.yml'), 'utf8');
    expect(text).to.contain('# Every option was converted.');
    expect(parse(text)).to.deep.equal({ hosts: ['b.example'], loglevel: 'debug', acl: { admin: [{ user: 'root' }] } });

    // A listener naming an access rule that does not exist: written without it, and said so.
    await writeFile(join(dataDir, 'rule.cfg'), '{hosts, ["b.example"]}.\n{listen, [{5222, ejabberd_c2s, [{access, c2s}]}]}.\n');
    expect((await call({ in: 'rule.cfg', out: 'rule.yml' })).status).to.equal(200);
    const ruleText = await readFile(join(dataDir, 'rule.yml'), 'utf8');
    expect(ruleText).to.contain("listener 5222 access: c2s -- the access rule 'c2s' is not defined");
    expect(parse(ruleText).listen[0]).to.not.have.property('access');
  });

  it('runs from servicectl, with a failure on stderr and a non-zero exit', async () => {
    const out = join(t.dir, 'from-cli.yml');
    const cli = await servicectl(t.configFile, 'convert_to_yaml', FIXTURE, out);
    expect(cli.code, cli.stdout + cli.stderr).to.equal(0);
    expect(parse(await readFile(out, 'utf8')).hosts).to.deep.equal(['example.com', 'chat.example.com']);
    const bad = await servicectl(t.configFile, 'convert_to_yaml', join(t.dir, 'nothing.cfg'), out);
    expect(bad.code).to.not.equal(0);
    expect(bad.stderr).to.contain('nothing.cfg').and.contain('no such file or directory');
  });
});
