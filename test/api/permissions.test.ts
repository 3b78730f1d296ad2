/**
 * api_permissions through the real HTTP API: each row of the matrix is a caller (account or none), a
 * command and the expected HTTP status.
 */
import { expect } from 'chai';
import { baseConfig, TestServer } from '../support/server.js';

describe('api_permissions over HTTP', () => {
  let t: TestServer;

  before(async () => {
    const config = baseConfig();
    config.acl = {
      admin: { user: 'admin@localhost' },
      loopback: { ip: ['127.0.0.0/8', '::1/128'] },
      office: { ip: '10.0.0.0/8' },
      auditors: { user_regexp: '^audit' },
    };
    config.access_rules = { registrars: { allow: [{ user: 'reggie@localhost' }] } };
    config.api_permissions = {
      'public commands': { who: { acl: 'loopback' }, what: ['status'] },
      'office only': { who: { acl: 'office' }, what: '*' },
      'ctl only': { from: 'service_ctl', who: 'all', what: ['registered_vhosts'] },
      auditors: { from: ['mod_http_api'], who: 'auditors', what: ['registered_users', 'registered_vhosts'] },
      registrars: { who: { access: 'registrars' }, what: '[tag:accounts]' },
      'admin access': { who: { acl: 'admin' }, what: ['*', '!unregister', '!registered_vhosts'] },
    };
    t = await TestServer.start(config);
    await t.bootstrapAdmin();
    const accounts = t.server.services.accounts;
    for (const user of ['alice', 'audit1', 'reggie']) await accounts.register(user, 'localhost', 'pw');
  });
  after(() => t.stop());

  const rows: Array<[who: string | undefined, command: string, args: Record<string, unknown>, status: number]> = [
    [undefined, 'status', {}, 200],
    [undefined, 'registered_users', { host: 'localhost' }, 403],
    ['alice@localhost:pw', 'registered_users', { host: 'localhost' }, 403],
    ['audit1@localhost:pw', 'registered_users', { host: 'localhost' }, 200],
    ['audit1@localhost:pw', 'registered_vhosts', {}, 200],
    ['audit1@localhost:pw', 'register', { user: 'x1', host: 'localhost', password: 'pw' }, 403],
    ['reggie@localhost:pw', 'register', { user: 'x2', host: 'localhost', password: 'pw' }, 200],
    ['reggie@localhost:pw', 'registered_users', { host: 'localhost' }, 200], // tagged accounts
    ['reggie@localhost:pw', 'gc', {}, 403],
    ['admin@localhost:adminpass', 'gc', {}, 200],
    ['admin@localhost:adminpass', 'unregister', { user: 'x2', host: 'localhost' }, 403],
    ['admin@localhost:adminpass', 'registered_vhosts', {}, 403], // excluded for admins, ctl-only group does not apply to HTTP
  ];

  for (const [who, command, args, status] of rows) {
    it(`${who?.split(':')[0] ?? 'anonymous'} → ${command}: ${status}`, async () => {
      const res = await t.api(command, args, who ? { basic: who } : {});
      expect(res.status, res.text).to.equal(status);
    });
  }

  describe('refuses before it explains', () => {
    // Arguments a 400 would describe: missing ones, unknown ones, values of the wrong type.
    const badCalls: Array<[string, Record<string, unknown>, Record<string, unknown>]> = [
      ['registered_users', {}, { host: 'localhost' }],
      ['registered_users', { host: 'localhost', bogus: 1 }, { host: 'localhost' }],
      ['register', { user: 'x3', host: 'localhost', password: 7 }, { user: 'x3', host: 'localhost', password: 'pw' }],
      ['register', { user: 'x3', host: 'nowhere.test', password: 'pw' }, { user: 'x3', host: 'localhost', password: 'pw' }],
    ];
    for (const [command, bad, good] of badCalls) {
      it(`${command} ${JSON.stringify(bad)}: the same 403 as a good call to a caller who may not run it, a 400 to one who may`, async () => {
        // The same bad call from someone allowed is a 400 that explains the arguments.
        const allowed = await t.api(command, bad, { basic: 'reggie@localhost:pw' });
        expect(allowed.status, allowed.text).to.equal(400);
        for (const who of [undefined, 'alice@localhost:pw']) {
          const refused = await t.api(command, bad, who ? { basic: who } : {});
          const refusedGood = await t.api(command, good, who ? { basic: who } : {});
          expect(refusedGood.status, refusedGood.text).to.equal(403);
          expect(refused.status, refused.text).to.equal(403);
          expect(refused.body).to.deep.equal(refusedGood.body);
        }
      });
    }

    it('also over GET, whose refusal of list arguments names them', async () => {
      const allowed = await t.api('oauth_issue_token', { jid: 'alice@localhost' }, { method: 'GET', basic: 'admin@localhost:adminpass' });
      expect(allowed.status, allowed.text).to.equal(400);
      expect(allowed.body.message).to.include('scopes');
      for (const who of [undefined, 'alice@localhost:pw']) {
        const res = await t.api('oauth_issue_token', { jid: 'alice@localhost' }, { method: 'GET', ...(who ? { basic: who } : {}) });
        expect(res.status, res.text).to.equal(403);
        expect(res.body.message).not.to.include('scopes');
      }
    });
  });

  it('judges an authenticated caller by its address too (ip clauses)', async () => {
    // alice is on loopback: the public group's acl loopback matches her address.
    const res = await t.api('status', {}, { basic: 'alice@localhost:pw' });
    expect(res.status).to.equal(200);
  });
});
