/**
 * mod_admin_extra's private storage, last activity and offline commands (private_get, private_set,
 * get_last, set_last, get_offline_count) against real clients: what the API stores is what the account's
 * client reads with jabber:iq:private and jabber:iq:last, and the other way round; messages sent to an
 * offline account are counted until its client comes online; bad input refused with nothing changed;
 * servicectl and XML-RPC; storage on each database.
 */
import { expect } from 'chai';
import { parseElement } from '@service/kernel';
import { servicectl } from '../support/cli.js';
import { testDatabases } from '../support/databases.js';
import { serverSqlConfig, TestServer, type RawConfig } from '../support/server.js';
import { collect, login, next, stopAll, xml, xmppConfig, type Client, type Element } from '../support/xmpp.js';
import { xmlrpcAsAdmin } from '../support/xmlrpc.js';

const ADMIN = 'admin@localhost:adminpass';
const NS_PRIVATE = 'jabber:iq:private';
const NS_LAST = 'jabber:iq:last';
const MODULES = { mod_admin_extra: {}, mod_private: {}, mod_last: {}, mod_offline: {} };
const XEP_0082 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/;

const NOTES = "<storage xmlns='storage:rosternotes'><note jid='bob@localhost' cdate='2024-01-01T00:00:00Z'>Met at the conference &amp; more</note></storage>";

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function config(modules: Record<string, unknown> = MODULES): RawConfig {
  const raw = xmppConfig(modules);
  (raw.listen as any[]).push({ port: 0, ip: '127.0.0.1', module: 'service_xmlrpc' });
  return raw;
}

/** What the account's own client gets from private storage for `name` in `ns`. */
async function fetchPrivate(client: Client, name: string, ns: string): Promise<Element> {
  const answer = await client.iqCaller.request(xml('iq', { type: 'get' }, xml('query', { xmlns: NS_PRIVATE }, xml(name, { xmlns: ns }))));
  return answer.getChild('query', NS_PRIVATE)!.getChild(name, ns)!;
}

/** jabber:iq:last of the client's own account: seconds and status text. */
async function ownLastActivity(client: Client): Promise<{ seconds: number; status: string }> {
  const answer = await client.iqCaller.request(xml('iq', { type: 'get' }, xml('query', { xmlns: NS_LAST })));
  const query = answer.getChild('query', NS_LAST)!;
  return { seconds: Number(query.attrs.seconds), status: query.text() };
}

/** Resolves once the server has handled everything `client` sent before (an IQ nobody serves is still answered). */
async function handled(client: Client): Promise<void> {
  const id = `barrier-${Math.random().toString(36).slice(2)}`;
  const answer = next(client, (s) => s.is('iq') && s.attrs.id === id);
  await client.send(xml('iq', { type: 'get', id, to: 'localhost' }, xml('query', { xmlns: 'urn:test:barrier' })));
  await answer;
}

/** Logs a client out after an unavailable presence carrying `status`, and waits until mod_last recorded it. */
async function leave(t: TestServer, client: Client, user: string, status: string): Promise<void> {
  await client.send(xml('presence'));
  await client.send(xml('presence', { type: 'unavailable' }, xml('status', {}, status)));
  await stopAll(client);
  const deadline = Date.now() + 10_000;
  while (t.server.services.xmpp.localSessions.byAccount(`${user}@localhost`).length > 0 && Date.now() < deadline) await pause(20);
  // The record is written by the session-closed hook, right after the session is gone.
  await pause(200);
}


describe('mod_admin_extra private storage, last activity and offline commands', () => {
  let t: TestServer;
  let alice: Client;
  let bob: Client;
  const api = (command: string, args: Record<string, unknown>) => t.api(command, args, { basic: ADMIN });
  const ok = async (command: string, args: Record<string, unknown>) => {
    const res = await api(command, args);
    expect(res.status, `${command}: ${res.text}`).to.equal(200);
    return res.body;
  };

  before(async () => {
    t = await TestServer.start(config());
    await t.bootstrapAdmin();
    for (const user of ['alice', 'bob', 'carol', 'dave', 'erin', 'fred', 'gina']) await t.server.services.accounts.register(user, 'localhost', `${user}-pw`);
    alice = await login(t, { user: 'alice', password: 'alice-pw', resource: 'desk' });
    bob = await login(t, { user: 'bob', password: 'bob-pw', resource: 'desk' });
  });
  after(async () => {
    await stopAll(alice, bob);
    await t.stop();
  });

  describe('private_set and private_get', () => {
    it('private_set stores the element; the account reads it with jabber:iq:private', async () => {
      expect(await ok('private_set', { user: 'alice', host: 'localhost', element: NOTES })).to.equal(0);
      const stored = await fetchPrivate(alice, 'storage', 'storage:rosternotes');
      const note = stored.getChild('note')!;
      expect(note.attrs.jid).to.equal('bob@localhost');
      expect(note.attrs.cdate).to.equal('2024-01-01T00:00:00Z');
      expect(note.text()).to.equal('Met at the conference & more');
    });

    it('private_get answers, as XML text, what the client stored', async () => {
      const bookmarks = xml('storage', { xmlns: 'storage:bookmarks' }, xml('conference', { jid: 'tea@conference.localhost', autojoin: 'true', name: 'Tea & "cakes"' }, xml('nick', {}, 'ali')));
      await alice.iqCaller.request(xml('iq', { type: 'set' }, xml('query', { xmlns: NS_PRIVATE }, bookmarks)));
      const text = await ok('private_get', { user: 'alice', host: 'localhost', element: 'storage', ns: 'storage:bookmarks' });
      const element = parseElement(text);
      expect(element.is('storage', 'storage:bookmarks')).to.equal(true);
      const conference = element.getChild('conference')!;
      expect(conference.attrs).to.deep.include({ jid: 'tea@conference.localhost', autojoin: 'true', name: 'Tea & "cakes"' });
      expect(conference.getChildText('nick')).to.equal('ali');
      expect(conference.ns).to.equal('storage:bookmarks');
    });

    it('private_get answers an empty element when the namespace holds nothing', async () => {
      expect(await ok('private_get', { user: 'alice', host: 'localhost', element: 'prefs', ns: 'urn:example:prefs' })).to.equal("<prefs xmlns='urn:example:prefs'/>");
      expect(await ok('private_get', { user: 'fred', host: 'localhost', element: 'storage', ns: 'storage:rosternotes' })).to.equal("<storage xmlns='storage:rosternotes'/>");
    });

    it('finds data by namespace, as XEP-0049 does, and private_set replaces what the namespace held', async () => {
      // The element name asked for does not matter: the namespace holds one element.
      const byNamespace = parseElement(await ok('private_get', { user: 'alice', host: 'localhost', element: 'other', ns: 'storage:rosternotes' }));
      expect(byNamespace.is('storage', 'storage:rosternotes')).to.equal(true);
      expect(byNamespace.getChildText('note')).to.equal('Met at the conference & more');

      // An XML declaration and surrounding whitespace are accepted.
      expect(await ok('private_set', { user: 'alice', host: 'localhost', element: "<?xml version='1.0'?>\n  <storage xmlns='storage:rosternotes'/>\n" })).to.equal(0);
      expect((await fetchPrivate(alice, 'storage', 'storage:rosternotes')).getChildElements()).to.have.length(0);
      expect(await ok('private_get', { user: 'alice', host: 'localhost', element: 'storage', ns: 'storage:rosternotes' })).to.equal("<storage xmlns='storage:rosternotes'/>");
    });

    describe('bad input is refused, naming the problem, and changes nothing', () => {
      before(async () => {
        await ok('private_set', { user: 'alice', host: 'localhost', element: NOTES });
      });
      const unchanged = async () => {
        expect((await fetchPrivate(alice, 'storage', 'storage:rosternotes')).getChildText('note')).to.equal('Met at the conference & more');
      };

      const refusedElements: Array<[string, string, RegExp]> = [
        ['unclosed XML', "<storage xmlns='storage:rosternotes'><note>", /^argument 'element' is not one well-formed XML element: /],
        ['text, not an element', 'just text', /^argument 'element' is not one well-formed XML element: /],
        ['an empty string', '', /^argument 'element' is not one well-formed XML element: expected an XML element$/],
        ['two elements', "<a xmlns='urn:a'/><b xmlns='urn:b'/>", /^argument 'element' is not one well-formed XML element: expected one element, got several$/],
        ['a DTD with an entity', "<!DOCTYPE s [<!ENTITY big 'xxxx'>]><storage xmlns='storage:rosternotes'>&big;</storage>", /^argument 'element' is not one well-formed XML element: /],
        ['an element without a namespace', '<storage><note/></storage>', /^argument 'element': <storage\/> has no namespace of its own; private storage keeps an element under a namespace of its own/],
        ['a reserved namespace', "<query xmlns='jabber:iq:private'><storage xmlns='storage:rosternotes'/></query>", /^argument 'element': the namespace jabber:iq:private is reserved/],
      ];
      for (const [what, element, message] of refusedElements) {
        it(`private_set refuses ${what} with 400`, async () => {
          const res = await api('private_set', { user: 'alice', host: 'localhost', element });
          expect(res.status).to.equal(400);
          expect(res.body.message).to.match(message);
          await unchanged();
        });
      }

      it('private_get refuses an element that is not an XML name, and an empty or reserved namespace', async () => {
        const badName = await api('private_get', { user: 'alice', host: 'localhost', element: 'a b', ns: 'storage:rosternotes' });
        expect(badName.status).to.equal(400);
        expect(badName.body.message).to.equal("argument 'element' must be an XML element name without a prefix, got 'a b'");
        const markup = await api('private_get', { user: 'alice', host: 'localhost', element: "x xmlns='y'/><z", ns: 'storage:rosternotes' });
        expect(markup.status).to.equal(400);
        const empty = await api('private_get', { user: 'alice', host: 'localhost', element: 'storage', ns: ' ' });
        expect(empty.status).to.equal(400);
        expect(empty.body.message).to.equal("argument 'ns' is empty: data in private storage is found by its namespace");
        const reserved = await api('private_get', { user: 'alice', host: 'localhost', element: 'query', ns: 'jabber:iq:private' });
        expect(reserved.status).to.equal(400);
        expect(reserved.body.message).to.equal("argument 'ns': the namespace jabber:iq:private is reserved");
      });

      it('answers 404 for an account that does not exist and stores nothing for it; 400 for a host not served', async () => {
        const set = await api('private_set', { user: 'ghost', host: 'localhost', element: NOTES });
        expect(set.status).to.equal(404);
        expect(set.body.message).to.equal('account ghost@localhost does not exist');
        const get = await api('private_get', { user: 'ghost', host: 'localhost', element: 'storage', ns: 'storage:rosternotes' });
        expect(get.status).to.equal(404);
        expect(get.body.message).to.equal('account ghost@localhost does not exist');
        const host = await api('private_get', { user: 'alice', host: 'nowhere.example', element: 'storage', ns: 'storage:rosternotes' });
        expect(host.status).to.equal(400);
        expect(host.body.message).to.match(/unknown virtual host 'nowhere\.example'/);
        await t.server.services.accounts.register('ghost', 'localhost', 'ghost-pw');
        try {
          expect(await ok('private_get', { user: 'ghost', host: 'localhost', element: 'storage', ns: 'storage:rosternotes' })).to.equal("<storage xmlns='storage:rosternotes'/>");
        } finally {
          await t.server.services.accounts.unregister('ghost', 'localhost');
        }
      });
    });
  });

  describe('get_last and set_last', () => {
    it('answers ONLINE, now, for an account with a session, available or not', async () => {
      const before = Date.now();
      const online = await ok('get_last', { user: 'bob', host: 'localhost' });
      expect(Object.keys(online)).to.deep.equal(['timestamp', 'status']);
      expect(online.status).to.equal('ONLINE');
      expect(online.timestamp).to.match(XEP_0082);
      expect(Date.parse(online.timestamp)).to.be.within(Math.floor(before / 1000) * 1000, Date.now());
    });

    it('answers when the last session ended and the status it left', async () => {
      const carol = await login(t, { user: 'carol', password: 'carol-pw' });
      const before = Math.floor(Date.now() / 1000) * 1000;
      await leave(t, carol, 'carol', 'Gone fishing');
      const last = await ok('get_last', { user: 'carol', host: 'localhost' });
      expect(last.status).to.equal('Gone fishing');
      expect(last.timestamp).to.match(XEP_0082);
      expect(Date.parse(last.timestamp)).to.be.within(before, Date.now());
    });

    it('answers the epoch and NOT FOUND for an account never seen', async () => {
      expect(await ok('get_last', { user: 'dave', host: 'localhost' })).to.deep.equal({ timestamp: '1970-01-01T00:00:00Z', status: 'NOT FOUND' });
    });

    it('set_last records what get_last answers and what the account reads with jabber:iq:last', async () => {
      expect(await ok('set_last', { user: 'erin', host: 'localhost', timestamp: 1500045311, status: 'GoSleeping' })).to.equal(0);
      expect(await ok('get_last', { user: 'erin', host: 'localhost' })).to.deep.equal({ timestamp: '2017-07-14T15:15:11Z', status: 'GoSleeping' });
      // The account's client, bound but not available: XEP-0012 answers the recorded logout.
      const erin = await login(t, { user: 'erin', password: 'erin-pw' });
      try {
        const seen = await ownLastActivity(erin);
        expect(seen.status).to.equal('GoSleeping');
        expect(seen.seconds).to.be.within(Math.floor(Date.now() / 1000) - 1500045311 - 5, Math.floor(Date.now() / 1000) - 1500045311 + 5);
      } finally {
        await stopAll(erin);
      }
      // A numeric string is taken too (query strings and the command line carry text).
      expect(await ok('set_last', { user: 'gina', host: 'localhost', timestamp: '0', status: '' })).to.equal(0);
      expect(await ok('get_last', { user: 'gina', host: 'localhost' })).to.deep.equal({ timestamp: '1970-01-01T00:00:00Z', status: '' });
    });

    it('refuses a timestamp out of range, a status XML cannot carry, and changes nothing', async () => {
      await ok('set_last', { user: 'fred', host: 'localhost', timestamp: 1700000000, status: 'kept' });
      const negative = await api('set_last', { user: 'fred', host: 'localhost', timestamp: -1, status: 'x' });
      expect(negative.status).to.equal(400);
      expect(negative.body.message).to.equal("argument 'timestamp' must be seconds since 1970-01-01 between 0 and 253402300799 (9999-12-31T23:59:59Z), got -1");
      const future = await api('set_last', { user: 'fred', host: 'localhost', timestamp: 253402300800, status: 'x' });
      expect(future.status).to.equal(400);
      const notInteger = await api('set_last', { user: 'fred', host: 'localhost', timestamp: 'yesterday', status: 'x' });
      expect(notInteger.status).to.equal(400);
      expect(notInteger.body.message).to.match(/argument 'timestamp' must be an integer/);
      const control = await api('set_last', { user: 'fred', host: 'localhost', timestamp: 1, status: 'esc\u001b' });
      expect(control.status).to.equal(400);
      expect(control.body.message).to.equal("argument 'status' holds U+001B at position 3, a character XML cannot carry");
      expect(await ok('get_last', { user: 'fred', host: 'localhost' })).to.deep.equal({ timestamp: '2023-11-14T22:13:20Z', status: 'kept' });
    });

    it('answers 404 for an account that does not exist, 400 for a host not served', async () => {
      for (const [command, args] of [
        ['get_last', {}],
        ['set_last', { timestamp: 1, status: 'x' }],
      ] as const) {
        const missing = await api(command, { user: 'ghost', host: 'localhost', ...args });
        expect(missing.status, command).to.equal(404);
        expect(missing.body.message).to.equal('account ghost@localhost does not exist');
        const host = await api(command, { user: 'fred', host: 'nowhere.example', ...args });
        expect(host.status, command).to.equal(400);
        expect(host.body.message).to.match(/unknown virtual host 'nowhere\.example'/);
      }
    });
  });

  describe('get_offline_count', () => {
    const chat = (to: string, body: string, type = 'chat') => xml('message', { to, type, id: `m-${body}` }, xml('body', {}, body));

    it('counts what was sent while the account was offline, until its client comes online', async () => {
      expect(await ok('get_offline_count', { user: 'dave', host: 'localhost' })).to.equal(0);
      for (const body of ['one', 'two', 'three']) await bob.send(chat('dave@localhost', body));
      // Headlines are not stored for later (RFC 6121), so they are not counted.
      await bob.send(chat('dave@localhost', 'news', 'headline'));
      await handled(bob);
      expect(await ok('get_offline_count', { user: 'dave', host: 'localhost' })).to.equal(3);
      expect(await ok('get_offline_count', { user: 'DAVE', host: 'LocalHost' }), 'names are normalized like JIDs').to.equal(3);

      const dave = await login(t, { user: 'dave', password: 'dave-pw' });
      try {
        const received = collect(dave);
        await dave.send(xml('presence'));
        await handled(dave);
        const deadline = Date.now() + 10_000;
        while (received.filter((s) => s.is('message')).length < 3 && Date.now() < deadline) await pause(20);
        expect(received.filter((s) => s.is('message')).map((m) => m.getChildText('body'))).to.deep.equal(['one', 'two', 'three']);
        expect(await ok('get_offline_count', { user: 'dave', host: 'localhost' })).to.equal(0);
      } finally {
        await stopAll(dave);
      }
    });

    it('answers 404 for an account that does not exist, 400 for a host not served', async () => {
      const missing = await api('get_offline_count', { user: 'ghost', host: 'localhost' });
      expect(missing.status).to.equal(404);
      expect(missing.body.message).to.equal('account ghost@localhost does not exist');
      const host = await api('get_offline_count', { user: 'dave', host: 'nowhere.example' });
      expect(host.status).to.equal(400);
      expect(host.body.message).to.match(/unknown virtual host 'nowhere\.example'/);
    });
  });

  describe('servicectl and XML-RPC', () => {
    const ctl = (...args: string[]) => servicectl(t.configFile, ...args);

    it('servicectl stores and reads private XML, prints last activity and the offline count', async () => {
      const prefs = "<prefs xmlns='urn:example:prefs'><theme>dark</theme></prefs>";
      expect(await ctl('private_set', 'alice', 'localhost', prefs)).to.deep.include({ code: 0, stdout: '' });
      expect((await fetchPrivate(alice, 'prefs', 'urn:example:prefs')).getChildText('theme')).to.equal('dark');
      expect((await ctl('private_get', 'alice', 'localhost', 'prefs', 'urn:example:prefs')).stdout).to.equal(`${prefs}\n`);

      expect(await ctl('set_last', 'fred', 'localhost', '1500045311', 'Out to lunch')).to.deep.include({ code: 0, stdout: '' });
      expect((await ctl('get_last', 'fred', 'localhost')).stdout).to.equal('timestamp  2017-07-14T15:15:11Z\nstatus     Out to lunch\n');
      expect((await ctl('get_offline_count', 'fred', 'localhost')).stdout).to.equal('0\n');

      const bad = await ctl('private_set', 'alice', 'localhost', '<prefs');
      expect(bad.code, 'a bad argument').to.equal(2);
      expect(bad.stderr).to.contain("argument 'element' is not one well-formed XML element");
    });

    it('XML-RPC answers structs named after the results, and faults for a missing account', async () => {
      expect((await xmlrpcAsAdmin(t, 'set_last', { user: 'fred', host: 'localhost', timestamp: 1500000000, status: 'via xmlrpc' })).result).to.deep.equal({ res: 0 });
      expect((await xmlrpcAsAdmin(t, 'get_last', { user: 'fred', host: 'localhost' })).result).to.deep.equal({
        last_activity: { timestamp: '2017-07-14T02:40:00Z', status: 'via xmlrpc' },
      });
      expect((await xmlrpcAsAdmin(t, 'get_offline_count', { user: 'fred', host: 'localhost' })).result).to.deep.equal({ value: 0 });
      expect((await xmlrpcAsAdmin(t, 'private_get', { user: 'alice', host: 'localhost', element: 'prefs', ns: 'urn:example:prefs' })).result).to.deep.equal({
        res: "<prefs xmlns='urn:example:prefs'><theme>dark</theme></prefs>",
      });
      expect((await xmlrpcAsAdmin(t, 'get_offline_count', { user: 'ghost', host: 'localhost' })).fault).to.deep.equal({ faultCode: 45, faultString: 'account ghost@localhost does not exist' });
    });
  });
});

describe('mod_admin_extra private, last and offline commands without their modules', () => {
  let t: TestServer;

  before(async () => {
    t = await TestServer.start(config({ mod_admin_extra: {} }));
    await t.bootstrapAdmin();
  });
  after(() => t.stop());

  it('fail with 422 saying which module to enable', async () => {
    const calls: Array<[string, Record<string, unknown>, string]> = [
      ['private_get', { element: 'storage', ns: 'storage:rosternotes' }, 'mod_private'],
      ['private_set', { element: NOTES }, 'mod_private'],
      ['get_last', {}, 'mod_last'],
      ['set_last', { timestamp: 1, status: '' }, 'mod_last'],
      ['get_offline_count', {}, 'mod_offline'],
    ];
    for (const [command, args, module] of calls) {
      const res = await t.api(command, { user: 'admin', host: 'localhost', ...args }, { basic: ADMIN });
      expect(res.status, command).to.equal(422);
      expect(res.body.message).to.equal(`${command} needs ${module}, which is not enabled: add it to modules`);
    }
  });
});

for (const database of testDatabases()) {
  describe(`mod_admin_extra private, last and offline commands on ${database.name}`, () => {
    let t: TestServer;

    before(async () => {
      const settings = await database.settings('/tmp');
      const raw = { ...config(), ...serverSqlConfig(settings) };
      t = await TestServer.start(raw);
      await t.bootstrapAdmin();
      for (const user of ['alice', 'bob']) await t.server.services.accounts.register(user, 'localhost', `${user}-pw`);
    });
    after(async () => {
      await t?.stop();
      await database.cleanup();
    });

    it('stores and reads back through the database, non-ASCII included', async () => {
      const api = (command: string, args: Record<string, unknown>) => t.api(command, args, { basic: ADMIN });
      const note = "<storage xmlns='storage:rosternotes'><note jid='bob@localhost'>Ålice ✓ 😀</note></storage>";
      expect((await api('private_set', { user: 'alice', host: 'localhost', element: note })).body).to.equal(0);
      expect((await api('private_get', { user: 'alice', host: 'localhost', element: 'storage', ns: 'storage:rosternotes' })).body).to.equal(note);
      expect((await api('set_last', { user: 'alice', host: 'localhost', timestamp: 1500045311, status: 'Später ✓' })).body).to.equal(0);
      expect((await api('get_last', { user: 'alice', host: 'localhost' })).body).to.deep.equal({ timestamp: '2017-07-14T15:15:11Z', status: 'Später ✓' });

      const bob = await login(t, { user: 'bob', password: 'bob-pw' });
      try {
        for (const body of ['un', 'deux']) await bob.send(xml('message', { to: 'alice@localhost', type: 'chat' }, xml('body', {}, body)));
        await handled(bob);
      } finally {
        await stopAll(bob);
      }
      expect((await api('get_offline_count', { user: 'alice', host: 'localhost' })).body).to.equal(2);
    });

    it('records the last activity of every account whose clients go at once, and of concurrent set_last calls', async () => {
      // The logouts' upserts share statements (mod_last's group commit): each account still gets its own row.
      const api = (command: string, args: Record<string, unknown>) => t.api(command, args, { basic: ADMIN });
      const users = Array.from({ length: 24 }, (_, i) => `gone${i}`);
      for (const user of users) await t.server.services.accounts.register(user, 'localhost', 'pw');
      const clients = await Promise.all(users.map((user) => login(t, { user, password: 'pw' })));
      const before = Math.floor(Date.now() / 1000);
      await stopAll(...clients);
      const lasts = await Promise.all(users.map(async (user) => {
        for (let tries = 0; tries < 50; tries++) {
          const body = (await api('get_last', { user, host: 'localhost' })).body as { timestamp: string; status: string };
          if (body.status !== 'ONLINE') return body;
          await new Promise((resolve) => setTimeout(resolve, 100));
        }
        throw new Error(`${user} still online`);
      }));
      for (const [i, last] of lasts.entries()) {
        expect(Date.parse(last.timestamp) / 1000, users[i]).to.be.within(before - 1, before + 30);
        expect(last.status, users[i]).to.not.equal('NOT FOUND');
      }
      // Set concurrently, 24 accounts at once and one account twice: every call succeeds and each account reads its own.
      const results = await Promise.all([
        ...users.map((user, i) => api('set_last', { user, host: 'localhost', timestamp: 1600000000 + i, status: `s${i}` })),
        api('set_last', { user: 'bob', host: 'localhost', timestamp: 1500000000, status: 'first' }),
        api('set_last', { user: 'bob', host: 'localhost', timestamp: 1500000001, status: 'second' }),
      ]);
      for (const res of results) expect(res.body).to.equal(0);
      for (const [i, user] of users.entries()) {
        expect((await api('get_last', { user, host: 'localhost' })).body).to.deep.equal({ timestamp: new Date((1600000000 + i) * 1000).toISOString().replace('.000', ''), status: `s${i}` });
      }
      expect(['first', 'second']).to.include(((await api('get_last', { user: 'bob', host: 'localhost' })).body as { status: string }).status);
    });
  });
}
