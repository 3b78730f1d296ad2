/**
 * ban_account, get_ban_details and unban_account (API version 2, ejabberd 25.08's behaviour) with real
 * clients: a ban kicks every session with a stream error giving the reason, and blocks every way in —
 * SASL PLAIN, SCRAM and X-OAUTH2, HTTP Basic, check_password — while the password stays; the account's
 * tokens are revoked; the details read back; unban restores login with the same password. Bad calls
 * change nothing; without mod_private the commands say they need it; the storage part runs on SQLite,
 * MariaDB and PostgreSQL.
 */
import { expect } from 'chai';
import { testDatabases } from '../support/databases.js';
import { servicectl } from '../support/cli.js';
import { RawXmppPeer } from '../support/raw-xmpp.js';
import { request, serverSqlConfig, TestServer, type RawConfig } from '../support/server.js';
import { login, stopAll, xml, xmppConfig, type Client } from '../support/xmpp.js';

const ADMIN = 'admin@localhost:adminpass';
const MODULES = { mod_admin_extra: {}, mod_private: {}, mod_last: {} };

function config(modules: Record<string, unknown> = MODULES): RawConfig {
  const raw: RawConfig = { ...xmppConfig(modules), oauth_access: 'all' };
  (raw.listen as unknown[]).push({ port: 0, ip: '127.0.0.1', module: 'service_xmlrpc' });
  return raw;
}

/** An XML-RPC call of `status` in the own-data form with a password: the fault code, or 0 for a result. */
async function xmlrpcStatus(t: TestServer, user: string, password: string): Promise<number> {
  const member = (name: string, value: string) => `<member><name>${name}</name><value><string>${value}</string></value></member>`;
  const body = `<?xml version="1.0"?><methodCall><methodName>status</methodName><params><param><value><struct>${member('user', user)}${member('server', 'localhost')}${member('password', password)}</struct></value></param></params></methodCall>`;
  const res = await request(`http://127.0.0.1:${t.server.portOf('service_xmlrpc')}/`, { method: 'POST', headers: { 'content-type': 'text/xml' }, body });
  const code = /<name>faultCode<\/name><value><int>(\d+)<\/int>/.exec(res.text);
  return code ? Number(code[1]) : 0;
}

/** Resolves with `condition: text` of the error the client gets (a stream error when kicked). */
function errorOf(client: Client): Promise<string> {
  return new Promise((resolve) => client.on('error', (err: { condition?: string; text?: string }) => resolve(`${err.condition}: ${err.text}`)));
}

/** The SASL failure of a login attempt as `condition: text`, or 'logged in'. */
async function loginOutcome(t: TestServer, user: string, password: string, mechanism: string): Promise<string> {
  let client: Client | undefined;
  try {
    client = await login(t, { user, password, mechanism });
    return 'logged in';
  } catch (err) {
    const { condition, text } = err as { condition?: string; text?: string };
    if (!condition) throw err;
    return text ? `${condition}: ${text}` : condition;
  } finally {
    await stopAll(client);
  }
}

// Whole seconds, as get_last writes them.
const isoTime = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/;

describe('ban_account, get_ban_details, unban_account', () => {
  let t: TestServer;
  const api = (command: string, args: Record<string, unknown>, prefix?: string) => t.api(command, args, { basic: ADMIN, prefix });
  const details = async (user: string) => {
    const res = await api('get_ban_details', { user, host: 'localhost' });
    expect(res.status, res.text).to.equal(200);
    return Object.fromEntries((res.body as Array<{ name: string; value: string }>).map((d) => [d.name, d.value]));
  };
  const issueToken = async (jid: string) => {
    const res = await api('oauth_issue_token', { jid, ttl: 600, scopes: ['sasl_auth'] });
    expect(res.status, res.text).to.equal(200);
    return res.body.token as string;
  };
  const tokensOf = async (jid: string) => ((await api('oauth_list_tokens', {})).body as Array<{ user: string }>).filter((tk) => tk.user === jid);

  before(async () => {
    t = await TestServer.start(config());
    await t.bootstrapAdmin();
    for (const user of ['mallory', 'trudy', 'eve', 'oscar', 'peggy']) await t.server.services.accounts.register(user, 'localhost', `${user}-pw`);
  });
  after(() => t.stop());

  it('kicks every session with a stream error giving the reason, and blocks every way in', async () => {
    const tcp = await login(t, { user: 'mallory', password: 'mallory-pw', resource: 'tcp' });
    const ws = await login(t, { user: 'mallory', password: 'mallory-pw', resource: 'web', transport: 'ws' });
    const kicked = Promise.all([errorOf(tcp), errorOf(ws)]);
    const oldToken = await issueToken('mallory@localhost');
    expect((await t.api('status', {}, { basic: 'mallory@localhost:mallory-pw' })).status).to.equal(200);
    expect((await api('check_password', { user: 'mallory', host: 'localhost', password: 'mallory-pw' })).body).to.equal(0);
    const xmlrpcBefore = await xmlrpcStatus(t, 'mallory', 'mallory-pw');
    expect(xmlrpcBefore).to.not.equal(10);

    const res = await api('ban_account', { user: 'mallory', host: 'localhost', reason: 'Spamming other users' });
    expect(res.status, res.text).to.equal(200);
    expect(res.body).to.equal(0);
    expect(await kicked).to.deep.equal(['policy-violation: Account banned: Spamming other users', 'policy-violation: Account banned: Spamming other users']);
    await stopAll(tcp, ws);
    expect((await api('connected_users', {})).body).to.not.include.members(['mallory@localhost/tcp', 'mallory@localhost/web']);

    // Every SASL mechanism; SCRAM gets as far as the ban check and says why.
    expect(await loginOutcome(t, 'mallory', 'mallory-pw', 'SCRAM-SHA-256')).to.equal('account-disabled: mallory@localhost is banned: Spamming other users');
    expect(await loginOutcome(t, 'mallory', 'mallory-pw', 'SCRAM-SHA-1-PLUS')).to.match(/^account-disabled: /);
    expect(await loginOutcome(t, 'mallory', 'mallory-pw', 'PLAIN')).to.equal('not-authorized');
    // The ban revoked the tokens it had, and no new one is issued.
    expect(await tokensOf('mallory@localhost')).to.deep.equal([]);
    expect(await loginOutcome(t, 'mallory', oldToken, 'X-OAUTH2')).to.match(/^not-authorized: the token is unknown, expired or revoked/);
    expect((await api('oauth_issue_token', { jid: 'mallory@localhost', ttl: 600, scopes: ['sasl_auth'] })).status).to.equal(422);
    // The password is right, but it logs nothing in.
    const basic = await t.api('status', {}, { basic: 'mallory@localhost:mallory-pw' });
    expect(basic.status).to.equal(401);
    expect(basic.body.message).to.match(/invalid credentials/);
    expect((await api('check_password', { user: 'mallory', host: 'localhost', password: 'mallory-pw' })).body).to.equal(1);
    expect(await xmlrpcStatus(t, 'mallory', 'mallory-pw')).to.equal(10, 'XML-RPC: bad credentials');
    expect(t.logged((l) => l.msg === 'login refused' && l.user === 'mallory')).to.not.be.empty;

    const ban = await details('mallory');
    expect(ban.reason).to.equal('Spamming other users');
    expect(ban.bandate).to.match(isoTime);
    // It was connected when banned.
    expect(ban).to.deep.include({ lastdate: ban.bandate, lastreason: 'ONLINE' });
    expect(Date.now() - Date.parse(ban.bandate!)).to.be.within(0, 60_000);
  });

  it('keeps the last activity of an offline account, and unban restores login with the same password', async () => {
    const trudy = await login(t, { user: 'trudy', password: 'trudy-pw' });
    await trudy.send(xml('presence', { type: 'unavailable' }, xml('status', {}, 'gone fishing')));
    await stopAll(trudy);
    // mod_last records the logout as the session ends, just after the client is gone.
    await waitFor(async () => (await t.server.services.storage.db()('last_activity').where({ username: 'trudy' })).length === 1);
    const loggedOutBy = Date.now();

    expect((await api('ban_account', { user: 'trudy', host: 'localhost', reason: '' })).body).to.equal(0);
    const ban = await details('trudy');
    expect(Object.keys(ban)).to.deep.equal(['reason', 'bandate', 'lastdate', 'lastreason']);
    expect(ban.reason).to.equal('');
    expect(ban.lastreason).to.equal('gone fishing');
    expect(Date.parse(ban.lastdate!)).to.be.at.most(Date.parse(ban.bandate!)).and.at.most(loggedOutBy + 1000);
    expect(await loginOutcome(t, 'trudy', 'trudy-pw', 'SCRAM-SHA-512')).to.equal('account-disabled: trudy@localhost is banned');
    // No new token either: it would be a way back in.
    const token = await api('oauth_issue_token', { jid: 'trudy@localhost', ttl: 600, scopes: ['sasl_auth'] });
    expect(token.status).to.equal(422);
    expect(token.body.message).to.equal('no token for trudy@localhost: trudy@localhost is banned');

    const res = await api('unban_account', { user: 'trudy', host: 'localhost' });
    expect(res.status, res.text).to.equal(200);
    expect(res.body).to.equal(0);
    expect((await api('get_ban_details', { user: 'trudy', host: 'localhost' })).body).to.deep.equal([]);
    for (const mechanism of ['SCRAM-SHA-256', 'PLAIN', 'X-OAUTH2']) {
      const password = mechanism === 'X-OAUTH2' ? await issueToken('trudy@localhost') : 'trudy-pw';
      expect(await loginOutcome(t, 'trudy', password, mechanism), mechanism).to.equal('logged in');
    }
    expect((await t.api('status', {}, { basic: 'trudy@localhost:trudy-pw' })).status).to.equal(200);
    expect((await api('check_password', { user: 'trudy', host: 'localhost', password: 'trudy-pw' })).body).to.equal(0);
  });

  it('forgets the ban with the account: a new account of the same name is not banned', async () => {
    expect((await api('register', { user: 'reborn', host: 'localhost', password: 'old-pw' })).status).to.equal(200);
    expect((await api('ban_account', { user: 'reborn', host: 'localhost', reason: 'spam' })).body).to.equal(0);
    // A password check caches the answer "banned".
    expect((await api('check_password', { user: 'reborn', host: 'localhost', password: 'old-pw' })).body).to.equal(1);
    expect((await api('unregister', { user: 'reborn', host: 'localhost' })).status).to.equal(200);
    expect((await api('register', { user: 'reborn', host: 'localhost', password: 'new-pw' })).status).to.equal(200);
    expect((await api('check_password', { user: 'reborn', host: 'localhost', password: 'new-pw' })).body).to.equal(0);
    expect(await details('reborn')).to.deep.equal({});
    await api('unregister', { user: 'reborn', host: 'localhost' });
  });

  it('keeps the ban out of reach of the account: its clients, private_get and private_set cannot touch it', async () => {
    const ban = xml('banned', { xmlns: 'jabber:service:banned' }, xml('reason', {}, 'self-made'));
    const client = await login(t, { user: 'trudy', password: 'trudy-pw' });
    try {
      const refused = await client.iqCaller.request(xml('iq', { type: 'set' }, xml('query', { xmlns: 'jabber:iq:private' }, ban))).then(
        () => 'stored',
        (err: { condition?: string }) => err.condition,
      );
      expect(refused).to.equal('not-acceptable');
    } finally {
      await stopAll(client);
    }
    const set = await api('private_set', { user: 'trudy', host: 'localhost', element: ban.toString() });
    expect(set.status, set.text).to.equal(400);
    expect(set.body.message).to.match(/jabber:service:banned is kept by the server/);
    const get = await api('private_get', { user: 'trudy', host: 'localhost', element: 'banned', ns: 'jabber:service:banned' });
    expect(get.status, get.text).to.equal(400);
    expect((await api('get_ban_details', { user: 'trudy', host: 'localhost' })).body).to.deep.equal([]);
  });

  it('closes a stream that authenticated before the ban and binds after it', async () => {
    const peer = await RawXmppPeer.connect(t.server.portOf('service_c2s')!);
    try {
      await peer.open({ to: 'localhost' });
      await peer.startTls();
      await peer.open({ to: 'localhost' });
      peer.write(`<auth xmlns='urn:ietf:params:xml:ns:xmpp-sasl' mechanism='PLAIN'>${Buffer.from('\0eve\0eve-pw').toString('base64')}</auth>`);
      await peer.waitFor(/<success\b/);
      await peer.open({ to: 'localhost' });
      expect((await api('ban_account', { user: 'eve', host: 'localhost', reason: 'late binder' })).body).to.equal(0);
      peer.write("<iq type='set' id='b1'><bind xmlns='urn:ietf:params:xml:ns:xmpp-bind'><resource>late</resource></bind></iq>");
      const error = await peer.streamError();
      expect({ condition: error.condition, text: error.text }).to.deep.equal({ condition: 'policy-violation', text: 'Account banned: late binder' });
      await peer.waitClosed();
      expect((await api('connected_users', {})).body).to.not.include('eve@localhost/late');
    } finally {
      peer.destroy();
    }
  });

  it('reads the bans again after clear_cache: a ban stored behind the commands\' back (a restore) is enforced', async () => {
    await t.server.services.accounts.register('olga', 'localhost', 'olga-pw');
    // Checked and known not banned.
    expect(await loginOutcome(t, 'olga', 'olga-pw', 'PLAIN')).to.equal('logged in');
    await t.server.services.storage.db('sql')('private_storage').insert({
      host: 'localhost',
      username: 'olga',
      namespace: 'jabber:service:banned',
      xml: '<banned xmlns="jabber:service:banned"><reason>restored</reason><bandate/><lastdate/><lastreason/></banned>',
      updated_at: Date.now(),
    });
    expect((await api('clear_cache', {})).status).to.equal(200);
    expect(await loginOutcome(t, 'olga', 'olga-pw', 'SCRAM-SHA-256')).to.equal('account-disabled: olga@localhost is banned: restored');
    expect((await api('unban_account', { user: 'olga', host: 'localhost' })).status).to.equal(200);
    expect(await loginOutcome(t, 'olga', 'olga-pw', 'PLAIN')).to.equal('logged in');
  });

  it('refuses bad calls with an error that names the problem, and changes nothing', async () => {
    const missing = await api('ban_account', { user: 'nobody', host: 'localhost', reason: 'x' });
    expect(missing.status).to.equal(404);
    expect(missing.body.message).to.equal('account nobody@localhost does not exist');
    expect((await api('get_ban_details', { user: 'nobody', host: 'localhost' })).status).to.equal(404);
    expect((await api('unban_account', { user: 'nobody', host: 'localhost' })).status).to.equal(404);
    const host = await api('ban_account', { user: 'oscar', host: 'elsewhere.org', reason: 'x' });
    expect(host.status).to.equal(400);
    expect(host.body.message).to.match(/unknown virtual host 'elsewhere.org'/);
    expect((await api('ban_account', { user: 'oscar', host: 'localhost' })).status).to.equal(400);

    expect((await api('get_ban_details', { user: 'oscar', host: 'localhost' })).body).to.deep.equal([]);
    const notBanned = await api('unban_account', { user: 'oscar', host: 'localhost' });
    expect(notBanned.status).to.equal(409);
    expect(notBanned.body.message).to.equal('account oscar@localhost is not banned');

    expect((await api('ban_account', { user: 'oscar', host: 'localhost', reason: 'first' })).body).to.equal(0);
    const twice = await api('ban_account', { user: 'oscar', host: 'localhost', reason: 'second' });
    expect(twice.status).to.equal(409);
    expect(twice.body.message).to.match(/^account oscar@localhost is already banned \(since \S+: first\)$/);
    expect((await details('oscar')).reason).to.equal('first');
    // Nothing but the ban changed: the password is the same once it is lifted.
    expect((await api('unban_account', { user: 'oscar', host: 'localhost' })).body).to.equal(0);
    expect(await loginOutcome(t, 'oscar', 'oscar-pw', 'SCRAM-SHA-256')).to.equal('logged in');
  });

  it('exists from API version 2 on', async () => {
    const v1 = await api('ban_account', { user: 'peggy', host: 'localhost', reason: 'x' }, '/api/v1');
    expect(v1.status).to.equal(404);
    expect(v1.body.message).to.equal('command ban_account is not available in API version 1: it starts at version 2');
    expect((await api('get_ban_details', { user: 'peggy', host: 'localhost' }, '/api/v2')).body).to.deep.equal([]);
    expect(await loginOutcome(t, 'peggy', 'peggy-pw', 'PLAIN')).to.equal('logged in');
  });

  it('works through servicectl', async () => {
    const ban = await servicectl(t.configFile, 'ban_account', 'peggy', 'localhost', 'flooding the lobby');
    expect(ban, ban.stderr).to.deep.include({ code: 0, stdout: '' });
    const shown = await servicectl(t.configFile, 'get_ban_details', 'peggy', 'localhost');
    expect(shown.code, shown.stderr).to.equal(0);
    expect(shown.stdout).to.match(/^name +value\nreason +flooding the lobby\nbandate +\S+\nlastdate +\S*\nlastreason */);
    const again = await servicectl(t.configFile, 'ban_account', 'peggy', 'localhost', 'again');
    expect(again.code).to.not.equal(0);
    expect(again.stderr).to.match(/already banned/);
    expect((await servicectl(t.configFile, 'unban_account', 'peggy', 'localhost')).code).to.equal(0);
    expect(await loginOutcome(t, 'peggy', 'peggy-pw', 'SCRAM-SHA-256')).to.equal('logged in');
  });
});

describe('ban_account without mod_private', () => {
  let t: TestServer;
  before(async () => {
    t = await TestServer.start(config({ mod_admin_extra: {} }));
    await t.bootstrapAdmin();
    await t.server.services.accounts.register('victor', 'localhost', 'victor-pw');
  });
  after(() => t.stop());

  it('says the commands need mod_private, and bans nobody', async () => {
    for (const [command, args] of [
      ['ban_account', { user: 'victor', host: 'localhost', reason: 'x' }],
      ['get_ban_details', { user: 'victor', host: 'localhost' }],
      ['unban_account', { user: 'victor', host: 'localhost' }],
    ] as const) {
      const res = await t.api(command, args, { basic: ADMIN });
      expect(res.status, command).to.equal(422);
      expect(res.body.message).to.equal(`${command} needs mod_private, which is not enabled: add it to modules`);
    }
    expect(await loginOutcome(t, 'victor', 'victor-pw', 'SCRAM-SHA-256')).to.equal('logged in');
  });
});

for (const database of testDatabases()) {
  describe(`bans stored on ${database.name}`, () => {
    let t: TestServer;
    before(async () => {
      const settings = await database.settings('/tmp');
      const raw = { ...config(), ...serverSqlConfig(settings) };
      t = await TestServer.start(raw);
      await t.bootstrapAdmin();
      await t.server.services.accounts.register('wendy', 'localhost', 'wendy-pw');
    });
    after(async () => {
      await t?.stop();
      await database.cleanup();
    });

    it('bans, reads back and unbans', async () => {
      const api = (command: string, args: Record<string, unknown>) => t.api(command, args, { basic: ADMIN });
      expect((await api('ban_account', { user: 'wendy', host: 'localhost', reason: 'Ünïcode ✓ <b>&' })).body).to.equal(0);
      const details = (await api('get_ban_details', { user: 'wendy', host: 'localhost' })).body as Array<{ name: string; value: string }>;
      expect(details.map((d) => d.name)).to.deep.equal(['reason', 'bandate', 'lastdate', 'lastreason']);
      expect(details[0]!.value).to.equal('Ünïcode ✓ <b>&');
      // Never logged in: no last activity.
      expect(details.slice(2).map((d) => d.value)).to.deep.equal(['', '']);
      expect(await loginOutcome(t, 'wendy', 'wendy-pw', 'SCRAM-SHA-256')).to.equal('account-disabled: wendy@localhost is banned: Ünïcode ✓ <b>&');
      expect((await api('unban_account', { user: 'wendy', host: 'localhost' })).body).to.equal(0);
      expect((await api('get_ban_details', { user: 'wendy', host: 'localhost' })).body).to.deep.equal([]);
      expect(await loginOutcome(t, 'wendy', 'wendy-pw', 'SCRAM-SHA-256')).to.equal('logged in');
    });
  });
}

async function waitFor(condition: () => Promise<boolean>, ms = 5000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error('timed out waiting');
    await new Promise((r) => setTimeout(r, 25));
  }
}
