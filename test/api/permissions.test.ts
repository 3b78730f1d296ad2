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

  it('judges an authenticated caller by its address too (ip clauses)', async () => {
    // alice is on loopback: the public group's acl loopback matches her address.
    const res = await t.api('status', {}, { basic: 'alice@localhost:pw' });
    expect(res.status).to.equal(200);
  });
});
