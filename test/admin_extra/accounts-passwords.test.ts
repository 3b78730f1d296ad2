/**
 * change_password, check_account, check_password and check_password_hash: the new password logs a real
 * client in and the old one no longer does; the yes/no answers 0 and 1; digests of plain-stored
 * passwords by Node's and Erlang's hash names, and a clear refusal for SCRAM-stored ones; bad input is a
 * 4xx naming the argument and changes nothing; samples through XML-RPC and servicectl.
 */
import { createHash } from 'node:crypto';
import { expect } from 'chai';
import { parseElement, type XmlElement } from '@service/kernel';
import { servicectl } from '../support/cli.js';
import { request, TestServer, type RawConfig } from '../support/server.js';
import { login, stopAll, xmppConfig, type Client } from '../support/xmpp.js';

const ADMIN = 'admin@localhost:adminpass';

const hex = (method: string, text: string) => createHash(method).update(text, 'utf8').digest('hex');

/** The SASL condition of a login attempt, or 'logged in'. */
async function loginOutcome(t: TestServer, user: string, password: string, options: { host?: string; mechanism?: string } = {}): Promise<string> {
  let client: Client | undefined;
  try {
    client = await login(t, { user, password, host: options.host, mechanism: options.mechanism ?? 'SCRAM-SHA-256' });
    return 'logged in';
  } catch (err) {
    const condition = (err as { condition?: string }).condition;
    if (!condition) throw err;
    return condition;
  } finally {
    await stopAll(client);
  }
}

/** An XML-RPC call in the administrator form (string arguments only), answered as `{name: value}` or a fault. */
async function xmlrpc(url: string, method: string, args: Record<string, string>): Promise<{ result?: Record<string, unknown>; fault?: Record<string, unknown> }> {
  const member = (name: string, value: string) => `<member><name>${name}</name><value>${value}</value></member>`;
  const struct = (members: string[]) => `<param><value><struct>${members.join('')}</struct></value></param>`;
  const admin = struct([member('user', '<string>admin</string>'), member('server', '<string>localhost</string>'), member('password', '<string>adminpass</string>'), member('admin', '<boolean>1</boolean>')]);
  const call = struct(Object.entries(args).map(([k, v]) => member(k, `<string>${v}</string>`)));
  const res = await request(url, { method: 'POST', headers: { 'content-type': 'text/xml' }, body: `<?xml version="1.0"?><methodCall><methodName>${method}</methodName><params>${admin}${call}</params></methodCall>` });
  const response = parseElement(res.text);
  const value = (v: XmlElement): unknown => {
    const typed = v.elements()[0]!;
    if (typed.name === 'int' || typed.name === 'i4') return Number(typed.text());
    if (typed.name === 'struct') return Object.fromEntries(typed.getChildren('member').map((m) => [m.getChildText('name')!, value(m.getChild('value')!)]));
    return typed.text();
  };
  const fault = response.getChild('fault');
  if (fault) return { fault: value(fault.getChild('value')!) as Record<string, unknown> };
  return { result: value(response.getChild('params')!.getChild('param')!.getChild('value')!) as Record<string, unknown> };
}

describe('change_password, check_account, check_password, check_password_hash', () => {
  let t: TestServer;
  const api = (command: string, args: Record<string, unknown>) => t.api(command, args, { basic: ADMIN });
  const checkPassword = async (user: string, password: string, host = 'localhost') => (await api('check_password', { user, host, password })).body;
  const checkHash = (user: string, passwordhash: string, hashmethod: string, host = 'localhost') => api('check_password_hash', { user, host, passwordhash, hashmethod });

  before(async () => {
    const config: RawConfig = { ...xmppConfig({ mod_admin_extra: {}, mod_private: {} }), auth_password_format: 'plain' };
    (config.listen as unknown[]).push({ port: 0, ip: '127.0.0.1', module: 'service_xmlrpc' });
    t = await TestServer.start(config);
    await t.bootstrapAdmin();
    const accounts = t.server.services.accounts;
    for (const user of ['alice', 'bob', 'carol', 'dora', 'erin']) await accounts.register(user, 'localhost', `${user}-pw`);
    // Stored as SCRAM keys: registered in plain, then converted.
    await accounts.register('sam', 'example.com', 'sam-pw');
    expect((await api('convert_to_scram', { host: 'example.com' })).body).to.equal(0);
  });
  after(() => t.stop());

  describe('change_password', () => {
    it('makes the new password log in over XMPP and HTTP and the old one fail; sessions stay connected', async () => {
      const connected = await login(t, { user: 'alice', password: 'alice-pw', resource: 'desk' });
      try {
        const res = await api('change_password', { user: 'alice', host: 'localhost', newpass: 'n3w pässword' });
        expect(res.status, res.text).to.equal(200);
        expect(res.body).to.equal(0);
        expect((await api('connected_users', {})).body).to.include('alice@localhost/desk');
        expect(await loginOutcome(t, 'alice', 'n3w pässword')).to.equal('logged in');
        expect(await loginOutcome(t, 'alice', 'alice-pw')).to.equal('not-authorized');
        expect((await t.api('status', {}, { basic: 'alice@localhost:n3w pässword' })).status).to.equal(200);
        expect((await t.api('status', {}, { basic: 'alice@localhost:alice-pw' })).status).to.equal(401);
        // The call is logged (so the log is there to look at), without the password.
        expect(t.logged((l) => l.command === 'change_password' && l.outcome === 'ok')).to.have.length(1);
        expect(t.logged((l) => JSON.stringify(l).includes('n3w pässword'))).to.deep.equal([]);
      } finally {
        await stopAll(connected);
      }
    });

    it('refuses a bad new password, a missing account and an unknown host, changing nothing', async () => {
      const empty = await api('change_password', { user: 'bob', host: 'localhost', newpass: '' });
      expect(empty.status).to.equal(400);
      expect(empty.body.message).to.equal('newpass: password is empty');
      const long = await api('change_password', { user: 'bob', host: 'localhost', newpass: 'x'.repeat(1025) });
      expect(long.status).to.equal(400);
      expect(long.body.message).to.match(/^newpass: password is 1025 characters long, the limit is 1024$/);
      const missing = await api('change_password', { user: 'nobody', host: 'localhost', newpass: 'pw' });
      expect(missing.status).to.equal(404);
      expect(missing.body.message).to.equal('account nobody@localhost does not exist');
      const host = await api('change_password', { user: 'bob', host: 'nowhere.test', newpass: 'pw' });
      expect(host.status).to.equal(400);
      expect(host.body.message).to.match(/unknown virtual host 'nowhere.test'/);
      const noArg = await api('change_password', { user: 'bob', host: 'localhost' });
      expect(noArg.status).to.equal(400);
      expect(noArg.body.message).to.match(/newpass/);
      expect(await checkPassword('bob', 'bob-pw')).to.equal(0);
      expect(await checkAccount(api, 'nobody')).to.equal(1);
    });
  });

  describe('check_account and check_password', () => {
    it('answer 0 for yes and 1 for no', async () => {
      expect(await checkAccount(api, 'bob')).to.equal(0);
      expect(await checkAccount(api, 'BOB')).to.equal(0, 'user names are normalized like JIDs');
      expect(await checkAccount(api, 'nobody')).to.equal(1);
      expect(await checkPassword('bob', 'bob-pw')).to.equal(0);
      expect(await checkPassword('bob', 'Bob-pw')).to.equal(1);
      expect(await checkPassword('bob', '')).to.equal(1);
      expect(await checkPassword('nobody', 'bob-pw')).to.equal(1);
      expect(await checkPassword('sam', 'sam-pw', 'example.com')).to.equal(0, 'SCRAM-stored');
    });

    it('refuse a host that is not served here or a name that cannot be an account', async () => {
      for (const [command, args] of [
        ['check_account', { user: 'bob', host: 'nowhere.test' }],
        ['check_password', { user: 'bob', host: 'nowhere.test', password: 'bob-pw' }],
      ] as const) {
        const res = await api(command, args);
        expect(res.status, command).to.equal(400);
        expect(res.body.message).to.match(/unknown virtual host 'nowhere.test': this server serves localhost, example.com/);
      }
      const bad = await api('check_account', { user: 'a b@c', host: 'localhost' });
      expect(bad.status).to.equal(400);
    });
  });

  describe('check_password_hash', () => {
    it('checks a hex digest by Node\'s or Erlang\'s name of the hash, in either case', async () => {
      for (const [method, node] of [['md5', 'md5'], ['sha', 'sha1'], ['SHA256', 'sha256'], ['SHA-256', 'sha256'], ['sha512', 'sha512'], ['sha3_256', 'sha3-256'], ['sha3-512', 'sha3-512'], ['ripemd160', 'ripemd160']]) {
        const res = await checkHash('carol', hex(node!, 'carol-pw'), method!);
        expect(res.status, `${method}: ${res.text}`).to.equal(200);
        expect(res.body, method).to.equal(0);
      }
      expect((await checkHash('carol', hex('md5', 'carol-pw').toUpperCase(), 'md5')).body).to.equal(0);
      expect((await checkHash('carol', hex('md5', 'wrong'), 'md5')).body).to.equal(1);
      expect((await checkHash('carol', hex('sha256', 'carol-pw'), 'sha512')).status).to.equal(400, 'a sha256 digest is too short for sha512');
    });

    it('answers 1 for a banned account, as check_password does', async () => {
      expect((await checkHash('dora', hex('sha256', 'dora-pw'), 'sha256')).body).to.equal(0);
      expect((await api('ban_account', { user: 'dora', host: 'localhost', reason: 'test' })).body).to.equal(0);
      expect((await checkHash('dora', hex('sha256', 'dora-pw'), 'sha256')).body).to.equal(1);
      expect(await checkPassword('dora', 'dora-pw')).to.equal(1);
      expect((await api('unban_account', { user: 'dora', host: 'localhost' })).body).to.equal(0);
      expect((await checkHash('dora', hex('sha256', 'dora-pw'), 'sha256')).body).to.equal(0);
    });

    it('says why it cannot check a password stored as SCRAM keys', async () => {
      const res = await checkHash('sam', hex('md5', 'sam-pw'), 'md5', 'example.com');
      expect(res.status).to.equal(422);
      expect(res.body.message).to.equal(
        'the password of sam@example.com is stored as salted SCRAM keys, from which no md5 digest of it can be computed: ' +
          'check_password_hash works only for passwords stored in plain (auth_password_format: plain); use check_password',
      );
    });

    it('refuses an unknown method, a hash that is not hex or of the wrong length, and a missing account', async () => {
      const method = await checkHash('carol', hex('md5', 'carol-pw'), 'md6');
      expect(method.status).to.equal(400);
      expect(method.body.message).to.match(/^argument 'hashmethod': unknown hash method 'md6': use one of md5, sha \(or sha1\), sha224, sha256/);
      const notHex = await checkHash('carol', 'carol-pw', 'md5');
      expect(notHex.status).to.equal(400);
      expect(notHex.body.message).to.match(/passwordhash must be the hex digest/);
      const length = await checkHash('carol', 'abcd', 'md5');
      expect(length.status).to.equal(400);
      expect(length.body.message).to.equal("argument 'passwordhash': a md5 digest is 32 hex digits long; passwordhash has 4");
      const missing = await checkHash('nobody', hex('md5', 'x'), 'md5');
      expect(missing.status).to.equal(404);
      expect(missing.body.message).to.equal('account nobody@localhost does not exist');
    });
  });

  describe('other frontends', () => {
    it('answers over XML-RPC as over HTTP', async () => {
      const url = `http://127.0.0.1:${t.server.portOf('service_xmlrpc')}/`;
      expect(await xmlrpc(url, 'check_password', { user: 'bob', host: 'localhost', password: 'bob-pw' })).to.deep.equal({ result: { res: 0 } });
      expect(await xmlrpc(url, 'check_account', { user: 'nobody', host: 'localhost' })).to.deep.equal({ result: { res: 1 } });
      expect(await xmlrpc(url, 'check_password_hash', { user: 'bob', host: 'localhost', passwordhash: hex('sha1', 'bob-pw'), hashmethod: 'sha' })).to.deep.equal({ result: { res: 0 } });
      const missing = await xmlrpc(url, 'change_password', { user: 'nobody', host: 'localhost', newpass: 'x' });
      expect(missing.fault).to.deep.equal({ faultCode: 45, faultString: 'account nobody@localhost does not exist' });
    });

    it('works through servicectl, the exit status telling 0 from 1', async () => {
      const change = await servicectl(t.configFile, 'change_password', 'erin', 'localhost', 'erin pw 2');
      expect(change, change.stderr).to.deep.include({ code: 0, stdout: '', stderr: '' });
      expect((await servicectl(t.configFile, 'check_password', 'erin', 'localhost', 'erin pw 2')).code).to.equal(0);
      const wrong = await servicectl(t.configFile, 'check_password', 'erin', 'localhost', 'erin-pw');
      expect(wrong).to.deep.include({ code: 1, stdout: '' });
      expect(await loginOutcome(t, 'erin', 'erin pw 2')).to.equal('logged in');
    });
  });
});

async function checkAccount(api: (command: string, args: Record<string, unknown>) => Promise<{ body: unknown }>, user: string): Promise<unknown> {
  return (await api('check_account', { user, host: 'localhost' })).body;
}
