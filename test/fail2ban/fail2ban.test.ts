/**
 * mod_fail2ban on the real server with real clients: password guessing with @xmpp/client over c2s, and with
 * Node's HTTP client over HTTP Basic on /api, bans the guessing address (from 127.0.0.1 and 127.0.0.2: Linux
 * routes all of 127/8 to lo, so each is a real peer address); the banned address is refused at connect with
 * the seconds left (stream error policy-violation; HTTP 403 with Retry-After on /api, XML-RPC and OAuth); each
 * ban is logged; `unban_ip`
 * through servicectl, with a mask, frees both. And without mod_fail2ban there are no address bans, while the
 * kernel still guards one account at one address.
 */
import { expect } from 'chai';
import { servicectl } from '../support/cli.js';
import { basicFrom, postFrom } from './http-basic.js';
import { encodeXmlRpc } from '../support/xmlrpc.js';
import { TestServer, type RawConfig } from '../support/server.js';
import { client as xmppClient } from '@xmpp/client';
import { xmppConfig } from '../support/xmpp.js';

const MAX_FAILURES = 4;
const LIFETIME = 600;

/**
 * What an @xmpp/client login (its own choice of mechanism, over STARTTLS) from 127.0.0.1 ends with: 'online', or the error's
 * condition and text (a SASL failure or a stream error). The client is stopped either way: c2s counts a
 * connection's failed logins when it closes.
 */
async function xmppLogin(t: TestServer, user: string, password: string): Promise<{ outcome: string; text: string }> {
  const xmpp = xmppClient({ service: `xmpp://127.0.0.1:${t.server.portOf('service_c2s')}`, domain: 'localhost', username: user, password, timeout: 10_000 } as any);
  (xmpp as any).reconnect.stop();
  xmpp.on('error', () => {});
  try {
    await xmpp.start();
    return { outcome: 'online', text: '' };
  } catch (err) {
    const error = err as { condition?: string; text?: string; message: string };
    return { outcome: error.condition ?? error.message, text: error.text ?? error.message };
  } finally {
    await xmpp.stop().catch(() => {});
  }
}

/** Waits until the server logged a line `matching` (what a closing connection reports comes a moment later). */
async function loggedSoon(t: TestServer, matching: (line: Record<string, any>) => boolean): Promise<Array<Record<string, any>>> {
  for (let waited = 0; waited < 5000; waited += 50) {
    const lines = t.logged(matching);
    if (lines.length) return lines;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return t.logged(matching);
}

function fail2banConfig(modules: Record<string, unknown>): RawConfig {
  const config = xmppConfig(modules);
  (config.listen as any[])[0].request_handlers['/oauth'] = 'service_oauth';
  (config.listen as any[]).push({ port: 0, ip: '127.0.0.1', module: 'service_xmlrpc' });
  config.oauth_access = 'all';
  config.api_permissions = {
    'admin access': { who: { acl: 'admin' }, what: '*' },
    'own account': { who: { access: 'local_users' }, what: ['user_resources'] },
  };
  config.access_rules = { local_users: { allow: 'all' } };
  return config;
}

describe('mod_fail2ban', function () {
  this.timeout(60_000);

  describe('enabled', () => {
    let t: TestServer;

    before(async () => {
      t = await TestServer.start(fail2banConfig({ mod_fail2ban: { c2s_max_auth_failures: MAX_FAILURES, c2s_auth_ban_lifetime: LIFETIME } }));
      await t.bootstrapAdmin();
      for (const user of ['alice', 'bob', 'carol', 'dave', 'erin']) await t.server.services.accounts.register(user, 'localhost', `${user}-pw`);
      const client = await t.api('oauth_add_client_password', { client_id: 'script', client_name: 'A script', secret: 'script-secret' }, { basic: 'admin@localhost:adminpass' });
      expect(client.status).to.equal(200);
    });
    after(() => t.stop());

    it('bans an address guessing passwords over c2s, and refuses it at connect with the seconds left', async () => {
      expect((await xmppLogin(t, 'alice', 'alice-pw')).outcome, 'before the guessing').to.equal('online');
      const users = ['alice', 'bob', 'carol', 'dave'];
      for (const user of users) expect((await xmppLogin(t, user, 'password123')).outcome, `guess on ${user}`).to.equal('not-authorized');
      const bans = await loggedSoon(t, (l) => l.msg === `login ban: 127.0.0.1 may not log in for ${LIFETIME} seconds after ${MAX_FAILURES} failed logins`);
      expect(bans, 'the ban is logged').to.have.length(1);
      expect(bans[0]!.way).to.equal('c2s');
      // Even the right password, on an account never guessed at: the stream is closed at its header.
      const refused = await xmppLogin(t, 'erin', 'erin-pw');
      expect(refused.outcome).to.equal('policy-violation');
      const seconds = Number(/refused for (\d+) more seconds/.exec(refused.text)?.[1]);
      expect(seconds, refused.text).to.be.within(LIFETIME - 30, LIFETIME);
    });

    it('bans an address guessing passwords over HTTP Basic: 403 with Retry-After on /api, XML-RPC and OAuth', async () => {
      const from = '127.0.0.2';
      expect((await basicFrom(from, t.port, 'alice', 'alice-pw')).status, 'before the guessing').to.equal(200);
      for (const user of ['alice', 'bob', 'carol', 'dave']) expect((await basicFrom(from, t.port, user, 'password123')).status, `guess on ${user}`).to.equal(401);
      expect(t.logged((l) => l.msg?.startsWith('login ban: 127.0.0.2 may not log in for') && l.way === 'http_api')).to.have.length(1);
      const refused = await basicFrom(from, t.port, 'erin', 'erin-pw');
      expect(refused.status, refused.text).to.equal(403);
      expect(Number(refused.retryAfter)).to.be.within(LIFETIME - 30, LIFETIME);
      expect(JSON.parse(refused.text).message).to.match(/too many failed logins from 127\.0\.0\.2: .* refused for \d+ more seconds/);
      // The other ways in that report failed logins refuse it too.
      const call = `<?xml version="1.0"?><methodCall><methodName>user_resources</methodName><params><param>${encodeXmlRpc({ user: 'erin', server: 'localhost', password: 'erin-pw' })}</param></params></methodCall>`;
      const xmlrpc = await postFrom(from, t.server.portOf('service_xmlrpc')!, '/', { 'content-type': 'text/xml' }, call);
      expect(xmlrpc.text, 'a fault, code 32 (forbidden)').to.match(/<name>faultCode<\/name>\s*<value><int>32<\/int>/);
      expect(xmlrpc.text).to.match(/refused for \d+ more seconds/);
      expect(Number(xmlrpc.retryAfter)).to.be.within(LIFETIME - 30, LIFETIME);
      const grant = new URLSearchParams({ grant_type: 'password', username: 'erin@localhost', password: 'erin-pw', scope: 'sasl_auth', client_id: 'script', client_secret: 'script-secret' }).toString();
      const oauth = await postFrom(from, t.port, '/oauth/token', { 'content-type': 'application/x-www-form-urlencoded' }, grant);
      expect(oauth.status, oauth.text).to.equal(403);
      expect(JSON.parse(oauth.text).error_description).to.match(/refused for \d+ more seconds/);
      expect(Number(oauth.retryAfter)).to.be.within(LIFETIME - 30, LIFETIME);
      // Another address is not affected.
      expect((await basicFrom('127.0.0.3', t.port, 'erin', 'erin-pw')).status).to.equal(200);
    });

    it('answers a negative integer for a malformed address, and 0 for a network with no entries', async () => {
      for (const address of ['not-an-address', '127.0.0.1/33', '127.0.0.256', '2001:db8::/129', '10.0.0.0/']) {
        const answer = await servicectl(t.configFile, 'unban_ip', address);
        expect(answer.stdout.trim(), `${address}: ${answer.stderr}`).to.equal('-1');
      }
      expect((await servicectl(t.configFile, 'unban_ip', '2001:db8::/32')).stdout.trim()).to.equal('0');
      expect((await servicectl(t.configFile, 'unban_ip', '10.0.0.0/8')).stdout.trim()).to.equal('0');
    });

    it('unban_ip with a mask frees both addresses, on every way in', async () => {
      const answer = await servicectl(t.configFile, 'unban_ip', '127.0.0.0/30');
      expect(answer.code, answer.stderr).to.equal(0);
      expect(answer.stdout.trim(), 'addresses with counted failures: 127.0.0.1 and 127.0.0.2').to.equal('2');
      expect((await xmppLogin(t, 'erin', 'erin-pw')).outcome).to.equal('online');
      expect((await basicFrom('127.0.0.2', t.port, 'erin', 'erin-pw')).status).to.equal(200);
      // Freed means counted from zero again: one more failure bans nobody.
      expect((await basicFrom('127.0.0.2', t.port, 'bob', 'wrong')).status).to.equal(401);
      expect((await basicFrom('127.0.0.2', t.port, 'bob', 'bob-pw')).status).to.equal(200);
    });

    it('takes an IPv4 address written as IPv6, with its mask, as ejabberd does', async () => {
      for (const user of ['alice', 'bob', 'carol', 'dave']) await basicFrom('127.0.0.4', t.port, user, 'password123');
      expect((await basicFrom('127.0.0.4', t.port, 'erin', 'erin-pw')).status).to.equal(403);
      expect((await servicectl(t.configFile, 'unban_ip', '::FFFF:127.0.0.4/128')).stdout.trim()).to.equal('1');
      expect((await basicFrom('127.0.0.4', t.port, 'erin', 'erin-pw')).status).to.equal(200);
    });
  });

  describe('not enabled', () => {
    let t: TestServer;

    before(async () => {
      t = await TestServer.start(fail2banConfig({}));
      await t.bootstrapAdmin();
      for (const user of ['alice', 'bob', 'carol', 'dave', 'erin', 'frank']) await t.server.services.accounts.register(user, 'localhost', `${user}-pw`);
    });
    after(() => t.stop());

    it('bans no address, but still guards one account at one address', async () => {
      const from = '127.0.0.5';
      // 25 failures on five accounts (under the kernel's 5 per account each): no address ban, unlike ejabberd's default 20.
      for (let round = 0; round < 4; round++) {
        for (const user of ['alice', 'bob', 'carol', 'dave', 'erin']) expect((await basicFrom(from, t.port, user, `guess${round}`)).status).to.equal(401);
      }
      expect((await basicFrom(from, t.port, 'frank', 'frank-pw')).status).to.equal(200);
      expect(t.logged((l) => l.msg?.startsWith('login ban: 127.0.0.5 may not log in for'))).to.have.length(0);
      // The fifth failure on one account bans that account there, and only there.
      expect((await basicFrom(from, t.port, 'alice', 'guess4')).status).to.equal(401);
      expect((await basicFrom(from, t.port, 'alice', 'alice-pw')).status).to.equal(429);
      expect((await basicFrom('127.0.0.6', t.port, 'alice', 'alice-pw')).status).to.equal(200);
      // unban_ip is mod_fail2ban's: not there without it.
      expect((await servicectl(t.configFile, 'unban_ip', from)).code).to.not.equal(0);
    });
  });
});
