/**
 * Non-ASCII user names and passwords (SASLprep, RFC 4013) on every way a password is checked: XMPP PLAIN,
 * SCRAM-SHA-1/256/512 and their -PLUS variants, HTTP Basic on /api, XML-RPC password credentials and the
 * OAuth password grant. Accounts are registered with names in Latin with diacritics, Cyrillic and CJK, and
 * passwords holding non-ASCII letters, non-ASCII spaces (which SASLprep maps to U+0020), characters it maps to
 * nothing (soft hyphen, joiners, variation selectors) and compatibility characters (U+2168 ROMAN NUMERAL NINE
 * is "IX" after NFKC); each then logs in with a different spelling that SASLprep makes the same. One password
 * differs from its NFKC form only by what SASLprep adds (U+1680, a soft hyphen): it proves the server applies
 * SASLprep and not NFKC alone. Wrong passwords and passwords SASLprep prohibits fail like any wrong password
 * (never a 500); prohibited ones are refused when set, naming the argument.
 *
 * The client side prepares with its own SASLprep (test/support/sasl-client.ts), as RFC 5802 asks a SCRAM
 * client to; PLAIN, HTTP, XML-RPC and OAuth send the other spelling as it is, so the server's preparation is
 * what is tested. The server's SASLprep is also compared, code point by code point, with RFC 3454's tables as
 * Python's stringprep module has them (Unicode 3.2).
 */
import { expect } from 'chai';
import { execFileSync } from 'node:child_process';
import { saslprep, saslprepMap, saslprepProblem, SaslprepError } from '../../kernel/src/accounts/saslprep.js';
import { Browser, basicAuth } from '../support/oauth-client.js';
import type { RawXmppPeer } from '../support/raw-xmpp.js';
import { SCRAM_MECHANISMS, bind, clientSaslprep, plain, scram, secureStream } from '../support/sasl-client.js';
import { request, TestServer } from '../support/server.js';
import { xmlrpcCall } from '../support/xmlrpc.js';
import { xmppConfig } from '../support/xmpp.js';

const ADMIN = 'admin@localhost:adminpass';
const CLIENT_SECRET = 'client-s3cret';

interface Person {
  readonly what: string;
  /** The spelling the account is registered with. */
  readonly registered: { readonly user: string; readonly password: string };
  /** Another spelling of the same name and password, after SASLprep (and, for the name, Nodeprep). */
  readonly login: { readonly user: string; readonly password: string };
  /** The account's user name as the server keeps it. */
  readonly account: string;
}

const PEOPLE: readonly Person[] = [
  {
    what: 'Latin with diacritics: NFD letters, NO-BREAK SPACE, U+2168, SOFT HYPHEN',
    registered: { user: 'ünïcödé', password: 'Pässwörd\u00a0\u2168\u00adend' },
    login: { user: 'U\u0308NI\u0308CO\u0308DE\u0301', password: 'Pa\u0308sswo\u0308rd IXend' },
    account: 'ünïcödé',
  },
  {
    what: 'Cyrillic: upper case name, EM SPACE, ZERO WIDTH JOINER, a decomposed й',
    registered: { user: 'Пользователь', password: 'пароль-й\u2003\u2168\u200dключ' },
    login: { user: 'ПОЛЬЗОВАТЕЛЬ', password: 'пароль-и\u0306 IXключ' },
    account: 'пользователь',
  },
  {
    what: 'CJK, registered in the plain spelling and logged in with the compatibility one (㍿, IDEOGRAPHIC SPACE, fullwidth and halfwidth forms, a variation selector)',
    registered: { user: '株式会社', password: '密码 IXpassパス' },
    login: { user: '\u337f', password: '密码\u3000\u2168\ufe0fｐａｓｓﾊﾟｽ' },
    account: '株式会社',
  },
  {
    what: 'what only SASLprep maps (NFKC keeps U+1680 OGHAM SPACE MARK and the soft hyphen)',
    registered: { user: 'ogham', password: 'a\u1680b\u00adc' },
    login: { user: 'OGHAM', password: 'a bc' },
    account: 'ogham',
  },
];

/** The same password with one letter changed: must never log in. */
const wrong = (password: string) => `${password}x`;

describe('attacks: SASLprep on every way in', function () {
  this.timeout(120_000);
  let t: TestServer;
  let c2s: number;
  let xmlrpcUrl: string;
  const peers: RawXmppPeer[] = [];

  async function secure(): Promise<RawXmppPeer> {
    const { peer } = await secureStream(c2s, { maxVersion: 'TLSv1.3' });
    peers.push(peer);
    return peer;
  }

  const basic = (user: string, password: string) => `Basic ${Buffer.from(`${user}@localhost:${password}`, 'utf8').toString('base64')}`;

  /** HTTP Basic on /api: the status of user_resources for the account. */
  async function viaBasic(person: Person, user: string, password: string): Promise<number> {
    const res = await t.api('user_resources', { user: person.account, host: 'localhost' }, { authorization: basic(user, password) });
    expect(res.status, res.text).to.not.equal(500);
    return res.status;
  }

  /** XML-RPC own-data form with a password: the result, or the fault code. */
  async function viaXmlRpc(user: string, password: string): Promise<string | number> {
    const answer = await xmlrpcCall(xmlrpcUrl, 'user_resources', { user, server: 'localhost', password });
    return answer.fault ? answer.fault.faultCode : 'ok';
  }

  /** The OAuth password grant: the status, and the error when there is one. */
  async function viaOAuth(user: string, password: string): Promise<{ status: number; error?: string }> {
    const browser = new Browser(t.url('/'));
    const page = await browser.post('/oauth/token', { grant_type: 'password', username: `${user}@localhost`, password, scope: 'sasl_auth' }, basicAuth('backend', CLIENT_SECRET));
    const body = JSON.parse(page.text);
    return { status: page.status, ...(body.error ? { error: body.error } : {}) };
  }

  before(async () => {
    const config = xmppConfig({ mod_admin_extra: {} });
    const listen = config.listen as Array<Record<string, any>>;
    listen[0]!.request_handlers['/oauth'] = 'service_oauth';
    listen.push({ port: 0, ip: '127.0.0.1', module: 'service_xmlrpc' });
    // Only these accounts, named as the server prepares them, may run user_resources, and mallory may not even
    // though she is local: so a 200 says the caller was recognized as that very account.
    config.acl = {
      ...(config.acl as object),
      people: { user: PEOPLE.map((p) => `${p.account}@localhost`) },
      locals: { server: 'localhost' },
      mallory: { user: 'mallory@localhost' },
    };
    config.access_rules = { locals_but_mallory: { deny: 'mallory', allow: 'locals' } };
    config.api_permissions = {
      ...(config.api_permissions as object),
      'these people': { who: { acl: 'people' }, what: ['user_resources'] },
      'locals but mallory': { who: { access: 'locals_but_mallory' }, what: ['registered_vhosts'] },
    };
    config.oauth_access = 'all';
    // Wrong passwords on purpose, all from 127.0.0.1: the failed-login limit is tested elsewhere.
    config.login_failures_per_address = 100_000;
    config.login_failures_per_account = 100_000;
    t = await TestServer.start(config);
    c2s = t.server.portOf('service_c2s')!;
    xmlrpcUrl = `http://127.0.0.1:${t.server.portOf('service_xmlrpc')}/`;
    await t.bootstrapAdmin();
    expect((await t.api('oauth_add_client_password', { client_id: 'backend', client_name: 'Backend', secret: CLIENT_SECRET }, { basic: ADMIN })).status).to.equal(200);
    await t.server.services.accounts.register('mallory', 'localhost', 'mallory-pw');
    for (const person of PEOPLE) {
      const res = await t.api('register', { user: person.registered.user, host: 'localhost', password: person.registered.password }, { basic: ADMIN });
      expect(res.status, `${person.what}: ${res.text}`).to.equal(200);
    }
    const users = (await t.api('registered_users', { host: 'localhost' }, { basic: ADMIN })).body as string[];
    expect(users).to.include.members(PEOPLE.map((p) => p.account));
  });

  afterEach(() => {
    for (const peer of peers.splice(0)) peer.destroy();
  });

  after(() => t?.stop());

  it('the login spellings really differ from the registered ones, and SASLprep (client side) makes them equal', () => {
    for (const person of PEOPLE) {
      expect(person.login.password, person.what).to.not.equal(person.registered.password);
      expect(person.login.user, person.what).to.not.equal(person.registered.user);
      expect(clientSaslprep(person.login.password), person.what).to.equal(clientSaslprep(person.registered.password));
    }
    const ogham = PEOPLE[3]!;
    expect(ogham.login.password.normalize('NFKC'), 'NFKC alone does not make them equal').to.not.equal(ogham.registered.password.normalize('NFKC'));
  });

  for (const person of PEOPLE) {
    describe(person.what, () => {
      it('XMPP PLAIN: the other spelling of the name and password logs in as the account; a wrong password does not', async () => {
        const peer = await secure();
        const answer = await plain(peer, person.login.user, person.login.password);
        expect(answer.outcome, answer.text).to.equal('success');
        expect(await bind(peer, 'localhost', 'plain')).to.equal(`${person.account}@localhost/plain`);
        const bad = await plain(await secure(), person.login.user, wrong(person.login.password));
        expect(bad.outcome).to.equal('not-authorized');
      });

      for (const mechanism of [...SCRAM_MECHANISMS, ...SCRAM_MECHANISMS.map((m) => `${m}-PLUS`)]) {
        it(`${mechanism}: the client's SASLprep of the other spelling logs in, and the server's signature checks out`, async () => {
          const peer = await secure();
          const result = await scram(peer, { mechanism, user: person.login.user, password: person.login.password, cbType: 'tls-exporter' });
          expect(result.outcome, result.text).to.equal('success');
          expect(result.serverVerified).to.equal(true);
          expect(await bind(peer, 'localhost', 'scram')).to.equal(`${person.account}@localhost/scram`);
          const bad = await scram(await secure(), { mechanism, user: person.login.user, password: wrong(person.login.password), cbType: 'tls-exporter' });
          expect(bad.outcome).to.equal('not-authorized');
        });
      }

      it('HTTP Basic on /api: the other spelling is the account (api_permissions naming it apply); a wrong password is a 401', async () => {
        expect(await viaBasic(person, person.login.user, person.login.password)).to.equal(200);
        expect(await viaBasic(person, person.login.user, wrong(person.login.password))).to.equal(401);
      });

      it('XML-RPC password credentials: the other spelling is the account (its own-data calls act on it); a wrong password is fault 10', async () => {
        expect(await viaXmlRpc(person.login.user, person.login.password)).to.equal('ok');
        expect(await viaXmlRpc(person.login.user, wrong(person.login.password))).to.equal(10);
      });

      it('OAuth password grant: the other spelling gets a token; a wrong password is invalid_grant', async () => {
        expect(await viaOAuth(person.login.user, person.login.password)).to.deep.equal({ status: 200 });
        expect(await viaOAuth(person.login.user, wrong(person.login.password))).to.deep.equal({ status: 400, error: 'invalid_grant' });
      });
    });
  }

  describe('a user name spelled otherwise is the same account everywhere (no way around a rule naming it)', () => {
    const spellings = ['mallory', 'MALLORY', '\uff4d\uff41\uff4c\uff4c\uff4f\uff52\uff59', '\uff2d\uff21\uff2c\uff2c\uff2f\uff32\uff39'];

    it('HTTP Basic: mallory is denied in every spelling (fullwidth letters included), as she is over XMPP', async () => {
      for (const user of spellings) {
        const res = await t.api('registered_vhosts', {}, { authorization: basic(user, 'mallory-pw') });
        expect(res.status, `${user}: ${res.text}`).to.equal(403);
      }
      // The same rule lets another local account through, so the 403 is mallory's.
      expect((await t.api('registered_vhosts', {}, { authorization: basic('ogham', PEOPLE[3]!.login.password) })).status).to.equal(200);
      for (const user of spellings) {
        const peer = await secure();
        expect((await plain(peer, user, 'mallory-pw')).outcome, user).to.equal('success');
        expect(await bind(peer, 'localhost', 'm')).to.equal('mallory@localhost/m');
      }
    });

    it('XML-RPC: mallory is denied in every spelling', async () => {
      for (const user of spellings) {
        const answer = await xmlrpcCall(xmlrpcUrl, 'registered_vhosts', { user, server: 'localhost', password: 'mallory-pw' });
        expect(answer.fault?.faultCode, `${user}: ${JSON.stringify(answer)}`).to.equal(32);
      }
    });
  });

  describe('a SCRAM user name', () => {
    it('is Nodeprep\'d after the client\'s SASLprep: a soft hyphen the client removed logs in; sent as is, it fails (RFC 5802 §5.1 lets the server fail it)', async () => {
      const prepared = await scram(await secure(), { mechanism: 'SCRAM-SHA-256', user: 'ünï\u00adcödé', password: PEOPLE[0]!.login.password });
      expect(prepared.outcome, prepared.text).to.equal('success');
      const peer = await secure();
      const raw = await plain(peer, 'ünï\u00adcödé', PEOPLE[0]!.login.password);
      expect(raw.outcome, 'PLAIN takes the name as a JID localpart, which may not hold a soft hyphen').to.equal('not-authorized');
    });
  });

  describe('passwords SASLprep prohibits', () => {
    const PROHIBITED: ReadonlyArray<[string, string, RegExp]> = [
      ['C.2.1 ASCII control', 'bad\u0007pw', /control character \(U\+0007\)/],
      ['C.2.2 non-ASCII control', 'bad\u0085pw', /U\+0085/],
      ['C.2.2 LINE SEPARATOR', 'bad\u2028pw', /U\+2028/],
      ['C.3 private use', 'bad\ue000pw', /private-use character \(U\+E000\)/],
      ['C.4 noncharacter', 'bad\ufdd0pw', /noncharacter \(U\+FDD0\)/],
      ['C.5 lone surrogate', 'bad\ud800pw', /surrogate|not valid UTF-8|U\+D800|U\+FFFD/],
      ['C.6 REPLACEMENT CHARACTER', 'bad\ufffdpw', /U\+FFFD/],
      ['C.7 ideographic description', 'bad\u2ff0pw', /ideographic description character \(U\+2FF0\)/],
      ['C.8 RIGHT-TO-LEFT OVERRIDE', 'bad\u202epw', /U\+202E/],
      ['C.9 tag', 'bad\u{e0041}pw', /U\+E0041/],
      ['unassigned code point (stored string)', 'bad\u0378pw', /unassigned code point \(U\+0378\)/],
      ['bidi: right-to-left and left-to-right mixed', '\u05d0\u05d1c', /right-to-left and left-to-right/],
      ['bidi: must end with a right-to-left character', '\u05d0\u05d11', /requires it to end with one/],
    ];

    for (const [i, [what, password, problem]] of PROHIBITED.entries()) {
      it(`register and change_password refuse it with a 400 naming the argument: ${what}`, async () => {
        const user = `prohibited${i}`;
        const registered = await t.api('register', { user, host: 'localhost', password }, { basic: ADMIN });
        expect(registered.status, registered.text).to.equal(400);
        expect(registered.body.message).to.match(/password/).and.to.match(problem);
        expect(registered.body.message, 'the letters of the password are not repeated').to.not.match(/'[a-z]'/);
        const changed = await t.api('change_password', { user: 'ogham', host: 'localhost', newpass: password }, { basic: ADMIN });
        expect(changed.status, changed.text).to.equal(400);
        expect(changed.body.message).to.match(/newpass/).and.to.match(problem);
        expect((await t.api('registered_users', { host: 'localhost' }, { basic: ADMIN })).body).to.not.include(user);
        // ogham's password did not change.
        expect(await viaBasic(PEOPLE[3]!, 'ogham', 'a bc')).to.equal(200);
      });
    }

    it('at login it just fails, like a wrong password, on every way in (never a 500 or a temporary failure)', async () => {
      const person = PEOPLE[3]!;
      for (const [what, password] of PROHIBITED) {
        const attempt = `${person.login.password}${password}`;
        const answer = await plain(await secure(), person.login.user, attempt);
        expect(answer.outcome, `PLAIN, ${what}`).to.equal('not-authorized');
        expect(await viaBasic(person, person.login.user, attempt), `Basic, ${what}`).to.equal(401);
        // XML cannot carry a C0 control character at all: that request is not valid XML (fault 40).
        expect(await viaXmlRpc(person.login.user, attempt), `XML-RPC, ${what}`).to.equal(/[\x00-\x08]/.test(password) ? 40 : 10);
        expect(await viaOAuth(person.login.user, attempt), `OAuth, ${what}`).to.deep.equal({ status: 400, error: 'invalid_grant' });
      }
    });

    it('a password that is only characters SASLprep maps to nothing is refused as empty', async () => {
      const res = await t.api('register', { user: 'invisible', host: 'localhost', password: '\u00ad\u200d\ufe0f' }, { basic: ADMIN });
      expect(res.status, res.text).to.equal(400);
      expect(res.body.message).to.match(/password/).and.to.match(/empty/);
    });
  });

  describe('change_password', () => {
    it('stores the new password SASLprep\'d: another spelling of it logs in on PLAIN, SCRAM and HTTP', async () => {
      const person = PEOPLE[3]!;
      const changed = await t.api('change_password', { user: 'OGHAM', host: 'localhost', newpass: 'Ⅸ\u00a0neu\u00ad' }, { basic: ADMIN });
      expect(changed.status, changed.text).to.equal(200);
      try {
        expect((await plain(await secure(), 'ogham', 'IX neu')).outcome).to.equal('success');
        expect((await scram(await secure(), { mechanism: 'SCRAM-SHA-512', user: 'ogham', password: 'IX\u2002neu' })).outcome).to.equal('success');
        expect(await viaBasic(person, 'Ogham', 'IX neu')).to.equal(200);
      } finally {
        expect((await t.api('change_password', { user: 'ogham', host: 'localhost', newpass: person.registered.password }, { basic: ADMIN })).status).to.equal(200);
      }
    });
  });

  describe('the server\'s SASLprep itself', () => {
    it('gives the results of RFC 4013 §3\'s examples', () => {
      expect(saslprep('I\u00adX')).to.equal('IX');
      expect(saslprep('user')).to.equal('user');
      expect(saslprep('USER')).to.equal('USER');
      expect(saslprep('\u00aa')).to.equal('a');
      expect(saslprep('\u2168')).to.equal('IX');
      expect(() => saslprep('\u0007')).to.throw(SaslprepError, /control character/);
      expect(() => saslprep('\u0627\u0031')).to.throw(SaslprepError, /right-to-left/);
    });

    it('allows unassigned code points in a query and refuses them in a stored string (RFC 3454 §7)', () => {
      expect(saslprep('a\u0378', 'query')).to.equal('a\u0378');
      expect(() => saslprep('a\u0378', 'stored')).to.throw(SaslprepError, /unassigned code point \(U\+0378\)/);
    });

    it('maps U+200B (in both C.1.2 and B.1) to a space, as RFC 4013 lists the mappings and libidn applies them', () => {
      expect(saslprep('a\u200bb')).to.equal('a b');
    });

    it('agrees with RFC 3454\'s tables (Python\'s stringprep, Unicode 3.2) on every code point Unicode 3.2 assigns', () => {
      // The reference: SASLprep of each single character by Python's stringprep tables and Unicode 3.2 NFKC.
      const script = String.raw`
import stringprep, unicodedata, sys
u = unicodedata.ucd_3_2_0
T = stringprep
def prohibited(c):
    return any(f(c) for f in (T.in_table_c12, T.in_table_c21_c22, T.in_table_c3, T.in_table_c4, T.in_table_c5, T.in_table_c6, T.in_table_c7, T.in_table_c8, T.in_table_c9))
def saslprep(s):
    s = u.normalize('NFKC', ''.join(' ' if T.in_table_c12(c) else ('' if T.in_table_b1(c) else c) for c in s))
    if any(prohibited(c) for c in s): return None
    if any(T.in_table_d1(c) for c in s) and (any(T.in_table_d2(c) for c in s) or not (T.in_table_d1(s[0]) and T.in_table_d1(s[-1]))): return None
    return s
ranges, out = [], []
for cp in range(0x110000):
    if 0xd800 <= cp <= 0xdfff or u.category(chr(cp)) == 'Cn': continue
    if ranges and ranges[-1][1] == cp - 1: ranges[-1][1] = cp
    else: ranges.append([cp, cp])
    r = saslprep(chr(cp))
    if r != chr(cp): out.append('%x:%s' % (cp, '!' if r is None else '.'.join('%x' % ord(x) for x in r)))
sys.stdout.write(' '.join('%x-%x' % (a, b) for a, b in ranges) + '\n' + '\n'.join(out))
`;
      let reference: string;
      try {
        reference = execFileSync('/usr/bin/python3', ['-c', script], { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
      } catch (err) {
        throw new Error(`this test needs /usr/bin/python3 (its stringprep module holds RFC 3454's tables): ${(err as Error).message}`);
      }
      // The first line: the code points Unicode 3.2 assigns, as ranges; then those SASLprep changes ('.'-joined
      // code points) or refuses ('!'). Every other assigned one maps to itself ('=').
      const [assignedLine, ...lines] = reference.split('\n');
      const assigned = assignedLine!.split(' ').map((range) => range.split('-').map((hex) => parseInt(hex, 16)) as [number, number]);
      const changed = new Map(lines.map((line) => line.split(':') as [string, string]));
      // Unicode 4.0 corrected the decompositions of these CJK compatibility ideographs (Corrigendum #4);
      // stringprep keeps 3.2's, Node's NFKC has the corrected ones.
      const corrigendum4 = new Set(['2f868', '2f874', '2f91f', '2f95f', '2f9bf']);
      const disagreements: string[] = [];
      let compared = 0;
      for (const [first, last] of assigned) {
        for (let cp = first; cp <= last; cp++) {
          const hex = cp.toString(16);
          const expected = changed.get(hex) ?? '=';
          // saslprep() is these two steps; called apart here, since a quarter of a million exceptions take long.
          const char = String.fromCodePoint(cp);
          const result = saslprepMap(char);
          const ours = saslprepProblem(result, 'query') !== undefined ? '!' : result === char ? '=' : [...result].map((c) => c.codePointAt(0)!.toString(16)).join('.');
          compared++;
          if (ours !== expected && !corrigendum4.has(hex)) disagreements.push(`U+${hex.toUpperCase()}: RFC 3454 ${expected}, ours ${ours}`);
        }
      }
      expect(changed.size, 'characters SASLprep changes or refuses in Unicode 3.2').to.be.greaterThan(8000);
      expect(compared, 'code points Unicode 3.2 assigns').to.be.greaterThan(95_000);
      expect(disagreements.slice(0, 50), `${disagreements.length} disagreements`).to.deep.equal([]);
    });
  });
});
