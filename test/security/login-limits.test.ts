/**
 * The failed-login limit, on every way in: XMPP (PLAIN and SCRAM), HTTP Basic on /api, XML-RPC passwords,
 * the OAuth password grant and the OAuth authorization form. Each case comes from its own loopback address
 * (127.0.0.x; Linux routes all of 127/8 to lo), so the address-level ban of one case cannot leak into another,
 * and "another address" is a real second peer address.
 *
 * The limits are set low here (3 per account at an address, 6 per address) to keep the test short; the
 * defaults (5 and 20, an hour) are checked against docs/configuration.md by the generated-docs test.
 */
import { expect } from 'chai';
import { request as httpRequest } from 'node:http';
import { hiddenFields } from '../support/oauth-client.js';
import type { RawXmppPeer } from '../support/raw-xmpp.js';
import { StreamRefusedError, plain, scram, secureStream, type SaslAnswer } from '../support/sasl-client.js';
import { TestServer, type RawConfig } from '../support/server.js';
import { encodeXmlRpc } from '../support/xmlrpc.js';
import { xmppConfig } from '../support/xmpp.js';

const PER_ACCOUNT = 3;
const PER_ADDRESS = 6;
const APP = 'https://app.example/cb';

/** A new loopback address for each use. */
let nextAddress = 10;
const freshAddress = () => `127.0.0.${nextAddress++}`;

interface HttpAnswer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
}

/** An HTTP request from a chosen local address (fetch cannot choose one). */
function httpFrom(localAddress: string, port: number, path: string, init: { method?: string; headers?: Record<string, string>; body?: string } = {}): Promise<HttpAnswer> {
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: '127.0.0.1', port, path, localAddress, method: init.method ?? 'POST', headers: init.headers }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (text += d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text }));
    });
    req.on('error', reject);
    req.end(init.body);
  });
}

type Attempt = { mechanism: 'PLAIN' | 'SCRAM-SHA-256'; user: string; password: string };
type Outcome = 'success' | { condition: string; text: string | undefined };

/** What a SASL answer means to these tests: success, or the failure's condition and text. */
function outcomeOf(answer: SaslAnswer): Outcome {
  return answer.outcome === 'success' ? 'success' : { condition: answer.outcome, text: answer.text };
}

/**
 * One XMPP connection from `localAddress`: STARTTLS, then the attempts in order until one succeeds. A stream
 * error instead of features (a banned address) comes back as `streamError`.
 */
async function c2s(port: number, localAddress: string, attempts: Attempt[]): Promise<{ outcomes: Outcome[]; streamError?: string; streamErrorText?: string }> {
  let peer: RawXmppPeer;
  try {
    ({ peer } = await secureStream(port, { localAddress }));
  } catch (err) {
    if (err instanceof StreamRefusedError) return { outcomes: [], streamError: err.streamError.condition, streamErrorText: err.streamError.text };
    throw err;
  }
  try {
    const outcomes: Outcome[] = [];
    for (const { mechanism, user, password } of attempts) {
      const outcome = outcomeOf(mechanism === 'PLAIN' ? await plain(peer, user, password) : await scram(peer, { mechanism, user, password }));
      outcomes.push(outcome);
      if (outcome === 'success') break;
    }
    return { outcomes };
  } finally {
    peer.end();
    await peer.waitClosed().catch(() => peer.destroy());
  }
}

describe('failed-login limits on every way in', function () {
  this.timeout(60_000);
  let t: TestServer;
  let c2sPort: number;
  let xmlrpcPort: number;

  before(async () => {
    const config: RawConfig = xmppConfig();
    const http = (config.listen as any[])[0];
    http.request_handlers['/oauth'] = 'service_oauth';
    (config.listen as any[]).push({ port: 0, ip: '127.0.0.1', module: 'service_xmlrpc' });
    config.oauth_access = 'all';
    config.login_failures_per_account = PER_ACCOUNT;
    config.login_failures_per_address = PER_ADDRESS;
    config.login_ban_lifetime = 600;
    config.acl = { ...(config.acl as object), exempted: { ip: '127.0.0.250/32' } };
    config.access_rules = { never_banned: { allow: 'exempted' } };
    config.login_ban_exempt = 'never_banned';
    config.api_permissions = {
      'public commands': { who: { acl: 'loopback' }, what: ['status'] },
      'admin access': { who: { acl: 'admin' }, what: '*' },
      'own account': { who: { access: 'local_users' }, what: ['user_resources', 'get_roster'] },
    };
    config.access_rules = { ...(config.access_rules as object), local_users: { allow: 'all' } };
    t = await TestServer.start(config);
    await t.bootstrapAdmin();
    for (let i = 0; i < 12; i++) await t.server.services.accounts.register(`user${i}`, 'localhost', `pw${i}`);
    await t.server.services.accounts.register('alice', 'localhost', 'alice-pw');
    await t.api('oauth_add_client_implicit', { client_id: 'webapp', client_name: 'Web app', redirect_uri: APP }, { basic: 'admin@localhost:adminpass' });
    await t.api('oauth_add_client_password', { client_id: 'script', client_name: 'A script', secret: 'script-secret' }, { basic: 'admin@localhost:adminpass' });
    c2sPort = t.server.portOf('service_c2s')!;
    xmlrpcPort = t.server.portOf('service_xmlrpc')!;
  });
  after(() => t.stop());

  /** One login through a door: 'ok', 'wrong' (refused as a bad password) or 'limited' (refused by the limit), with details. */
  type Door = (from: string, user: string, password: string) => Promise<{ result: 'ok' | 'wrong' | 'limited'; detail: string; retryAfter?: string }>;

  const basicHeader = (user: string, password: string) => ({ authorization: `Basic ${Buffer.from(`${user}@localhost:${password}`).toString('base64')}`, 'content-type': 'application/json' });

  /** One XMPP connection, one attempt: a stream error or <temporary-auth-failure/> is the limit speaking. */
  const xmppDoor =
    (mechanism: Attempt['mechanism']): Door =>
    async (from, user, password) => {
      const { outcomes, streamError, streamErrorText } = await c2s(c2sPort, from, [{ mechanism, user, password }]);
      if (streamError) return { result: 'limited', detail: `${streamError}: ${streamErrorText}` };
      const [outcome] = outcomes;
      if (outcome === 'success') return { result: 'ok', detail: 'success' };
      return { result: outcome!.condition === 'temporary-auth-failure' ? 'limited' : 'wrong', detail: `${outcome!.condition}: ${outcome!.text}` };
    };

  const doors: Record<string, Door> = {
    'XMPP PLAIN': xmppDoor('PLAIN'),
    'XMPP SCRAM-SHA-256': xmppDoor('SCRAM-SHA-256'),
    'HTTP Basic on /api': async (from, user, password) => {
      const res = await httpFrom(from, t.port, '/api/user_resources', { headers: basicHeader(user, password), body: JSON.stringify({ user, host: 'localhost' }) });
      const result = res.status === 200 ? 'ok' : res.status === 429 ? 'limited' : 'wrong';
      return { result, detail: `${res.status} ${res.text}`, retryAfter: res.headers['retry-after'] as string | undefined };
    },
    'XML-RPC password': async (from, user, password) => {
      const body = `<?xml version="1.0"?><methodCall><methodName>user_resources</methodName><params><param>${encodeXmlRpc({ user, server: 'localhost', password })}</param></params></methodCall>`;
      const res = await httpFrom(from, xmlrpcPort, '/', { headers: { 'content-type': 'text/xml' }, body });
      const code = /<name>faultCode<\/name>\s*<value><int>(\d+)<\/int>/.exec(res.text)?.[1];
      const result = code === undefined ? 'ok' : code === '29' ? 'limited' : 'wrong';
      return { result, detail: `${res.status} ${res.text.replace(/\s+/g, ' ').slice(0, 300)}`, retryAfter: res.headers['retry-after'] as string | undefined };
    },
    'OAuth password grant': async (from, user, password) => {
      const body = new URLSearchParams({ grant_type: 'password', username: `${user}@localhost`, password, scope: 'sasl_auth', client_id: 'script', client_secret: 'script-secret' }).toString();
      const res = await httpFrom(from, t.port, '/oauth/token', { headers: { 'content-type': 'application/x-www-form-urlencoded' }, body });
      const result = res.status === 200 ? 'ok' : res.status === 429 ? 'limited' : 'wrong';
      return { result, detail: `${res.status} ${res.text}`, retryAfter: res.headers['retry-after'] as string | undefined };
    },
    'OAuth authorization form': async (from, user, password) => {
      const query = new URLSearchParams({ response_type: 'token', client_id: 'webapp', scope: 'sasl_auth', redirect_uri: APP, state: 's' }).toString();
      const form = await httpFrom(from, t.port, `/oauth/authorization_token?${query}`, { method: 'GET' });
      expect(form.status, form.text).to.equal(200);
      const fields = { ...hiddenFields(form.text), username: `${user}@localhost`, password };
      const res = await httpFrom(from, t.port, '/oauth/authorization_token', {
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams(fields).toString(),
      });
      const location = String(res.headers.location ?? '');
      const result = res.status === 302 && location.includes('access_token=') ? 'ok' : res.status === 429 ? 'limited' : 'wrong';
      // The page's error paragraph, not its whole HTML.
      const error = /class="error"[^>]*>([^<]*)</.exec(res.text)?.[1];
      return { result, detail: `${res.status} ${location || error || res.text.slice(0, 300)}`, retryAfter: res.headers['retry-after'] as string | undefined };
    },
  };

  for (const [name, door] of Object.entries(doors)) {
    describe(name, () => {
      it(`stops guessing one account after ${PER_ACCOUNT} failures from one address, without locking its owner out elsewhere`, async () => {
        const attacker = freshAddress();
        const owner = freshAddress();
        // The right password works from the attacker's address before the guessing starts.
        expect((await door(attacker, 'user0', 'pw0')).result).to.equal('ok');
        for (let i = 0; i < PER_ACCOUNT; i++) {
          const guess = await door(attacker, 'user0', `guess${i}`);
          expect(guess.result, guess.detail).to.equal('wrong');
        }
        const banned = t.logged((l) => /^login ban: .* may not log in to user0@localhost/.test(l.msg) && l.ip === attacker);
        expect(banned, 'the ban is logged').to.have.length(1);
        // Now even the right password is refused from there, with a clear error (and Retry-After over HTTP).
        const refused = await door(attacker, 'user0', 'pw0');
        expect(refused.result, refused.detail).to.equal('limited');
        expect(refused.detail).to.match(/too many failed logins/);
        if (refused.retryAfter !== undefined) expect(Number(refused.retryAfter)).to.be.within(1, 600);
        else expect(name).to.match(/^XMPP/);
        // The owner, from another address, logs in as usual; other accounts still work from the attacker's address.
        expect((await door(owner, 'user0', 'pw0')).result).to.equal('ok');
        expect((await door(attacker, 'user1', 'pw1')).result).to.equal('ok');
      });

      it(`stops credential stuffing after ${PER_ADDRESS} failures on different accounts from one address`, async () => {
        const stuffer = freshAddress();
        for (let i = 0; i < PER_ADDRESS; i++) {
          const guess = await door(stuffer, `user${i}`, 'password123');
          expect(guess.result, guess.detail).to.equal('wrong');
        }
        expect(t.logged((l) => /^login ban: \S+ may not log in for/.test(l.msg) && l.ip === stuffer)).to.have.length(1);
        // Every account is refused from that address now, even with its password; nobody else is affected.
        const refused = await door(stuffer, 'user7', 'pw7');
        expect(refused.result, refused.detail).to.equal('limited');
        expect((await door(freshAddress(), 'user7', 'pw7')).result).to.equal('ok');
      });
    });
  }

  it('counts failures across doors: guessing on one and trying on another adds up', async () => {
    const attacker = freshAddress();
    expect((await doors['HTTP Basic on /api']!(attacker, 'user2', 'x1')).result).to.equal('wrong');
    expect((await doors['XMPP PLAIN']!(attacker, 'user2', 'x2')).result).to.equal('wrong');
    expect((await doors['OAuth password grant']!(attacker, 'user2', 'x3')).result).to.equal('wrong');
    for (const door of ['XML-RPC password', 'XMPP SCRAM-SHA-256', 'OAuth authorization form']) {
      const refused = await doors[door]!(attacker, 'user2', 'pw2');
      expect(refused.result, `${door}: ${refused.detail}`).to.equal('limited');
    }
  });

  it('closes the stream of a banned address at its header, saying why', async () => {
    const stuffer = freshAddress();
    for (let i = 0; i < PER_ADDRESS; i++) expect((await doors['HTTP Basic on /api']!(stuffer, `user${i}`, 'nope')).result).to.equal('wrong');
    const { streamError, streamErrorText } = await c2s(c2sPort, stuffer, []);
    expect(streamError).to.equal('policy-violation');
    expect(streamErrorText).to.match(new RegExp(`too many failed logins from ${stuffer.replace(/\./g, '\\.')}`));
  });

  describe('an XMPP connection is judged by its outcome', () => {
    it('forgives a client that tries mechanisms in turn and gets in', async () => {
      const from = freshAddress();
      // Two connections, each failing twice before succeeding: no failure counts, so no ban.
      for (let round = 0; round < 2; round++) {
        const { outcomes } = await c2s(c2sPort, from, [
          { mechanism: 'SCRAM-SHA-256', user: 'user3', password: 'wrong' },
          { mechanism: 'PLAIN', user: 'user3', password: 'wrong' },
          { mechanism: 'PLAIN', user: 'user3', password: 'pw3' },
        ]);
        expect(outcomes.map((o) => (o === 'success' ? o : o.condition))).to.deep.equal(['not-authorized', 'not-authorized', 'success']);
      }
      // A full allowance of failures is still needed to ban the account there: the forgiven ones did not count.
      for (let i = 0; i < PER_ACCOUNT - 1; i++) expect((await doors['XMPP PLAIN']!(from, 'user3', 'bad')).result).to.equal('wrong');
      expect((await doors['XMPP PLAIN']!(from, 'user3', 'pw3')).result).to.equal('ok');
    });

    it('counts one wrong password tried with several mechanisms once, and each retry with one mechanism', async () => {
      const from = freshAddress();
      // SCRAM and PLAIN with one wrong password: one failure.
      await c2s(c2sPort, from, [
        { mechanism: 'SCRAM-SHA-256', user: 'user4', password: 'wrong' },
        { mechanism: 'PLAIN', user: 'user4', password: 'wrong' },
      ]);
      // Two passwords with PLAIN: two more, which reaches the limit of three.
      await c2s(c2sPort, from, [
        { mechanism: 'PLAIN', user: 'user4', password: 'wrong1' },
        { mechanism: 'PLAIN', user: 'user4', password: 'wrong2' },
      ]);
      const refused = await doors['XMPP PLAIN']!(from, 'user4', 'pw4');
      expect(refused.result, refused.detail).to.equal('limited');
    });

    it('does not forgive failures on another account than the one that got in', async () => {
      const from = freshAddress();
      await c2s(c2sPort, from, [
        { mechanism: 'PLAIN', user: 'user5', password: 'g1' },
        { mechanism: 'PLAIN', user: 'user5', password: 'g2' },
        { mechanism: 'PLAIN', user: 'user5', password: 'g3' },
        { mechanism: 'PLAIN', user: 'user6', password: 'pw6' },
      ]);
      const refused = await doors['XMPP PLAIN']!(from, 'user5', 'pw5');
      expect(refused.result, refused.detail).to.equal('limited');
    });
  });

  it('never bans an address that login_ban_exempt allows', async () => {
    const trusted = '127.0.0.250';
    for (let i = 0; i < PER_ADDRESS + 2; i++) expect((await doors['HTTP Basic on /api']!(trusted, 'user8', `no${i}`)).result).to.equal('wrong');
    expect((await doors['HTTP Basic on /api']!(trusted, 'user8', 'pw8')).result).to.equal('ok');
  });
});
