/**
 * vCards (mod_vcard, XEP-0054), private XML storage (mod_private, XEP-0049) and last activity (mod_last,
 * XEP-0012) with real clients; vCard fields as the admin commands address them; each module's storage on
 * each database.
 */
import { expect } from 'chai';
import { XmlElement, parseElement } from '@service/kernel';
import { readField, writeField } from '../../modules/mod_vcard/src/fields.js';
import { testDatabases } from '../support/databases.js';
import { serverSqlConfig, TestServer } from '../support/server.js';
import { login, next, stopAll, xml, xmppConfig, type Client, type Element } from '../support/xmpp.js';

const ADMIN = 'admin@localhost:adminpass';
const NS_VCARD = 'vcard-temp';
const NS_PRIVATE = 'jabber:iq:private';
const NS_LAST = 'jabber:iq:last';

const MODULES = { mod_vcard: { max_size: 4096 }, mod_private: {}, mod_last: {} };

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function iq(type: 'get' | 'set', to: string | undefined, payload: Element): Element {
  return xml('iq', { type, to }, payload);
}

/** The IQ result, or the stanza error condition it failed with (e.g. 'forbidden'). */
async function request(client: Client, stanza: Element): Promise<Element | string> {
  try {
    return await client.iqCaller.request(stanza);
  } catch (err) {
    const condition = (err as { condition?: string }).condition;
    if (condition) return condition;
    throw err;
  }
}

async function result(client: Client, stanza: Element): Promise<Element> {
  const answer = await request(client, stanza);
  if (typeof answer === 'string') throw new Error(`expected a result, got <${answer}/>`);
  return answer;
}

function vcard(fn: string, nick: string): Element {
  return xml(
    'vCard',
    { xmlns: NS_VCARD },
    xml('FN', {}, fn),
    xml('NICKNAME', {}, nick),
    xml('N', {}, xml('FAMILY', {}, 'Liddell'), xml('GIVEN', {}, 'Alice')),
    xml('TEL', {}, xml('HOME'), xml('VOICE'), xml('NUMBER', {}, '+1 555 0100')),
  );
}

describe('XMPP vCards, private storage and last activity', () => {
  let t: TestServer;
  let alice: Client;
  let bob: Client;

  before(async () => {
    t = await TestServer.start(xmppConfig(MODULES));
    await t.bootstrapAdmin();
    for (const user of ['alice', 'bob', 'carol', 'dora']) await t.server.services.accounts.register(user, 'localhost', `${user}-pw`);
    alice = await login(t, { user: 'alice', password: 'alice-pw', resource: 'a' });
    bob = await login(t, { user: 'bob', password: 'bob-pw', resource: 'b' });
  });
  after(async () => {
    await stopAll(alice, bob);
    await t.stop();
  });

  describe('vcard-temp (mod_vcard)', () => {
    it('stores a vCard and gives it back to its owner', async () => {
      await result(alice, iq('set', undefined, vcard('Alice Liddell', 'ali')));
      const answer = await result(alice, iq('get', undefined, xml('vCard', { xmlns: NS_VCARD })));
      const card = answer.getChild('vCard', NS_VCARD)!;
      expect(card.getChildText('FN')).to.equal('Alice Liddell');
      expect(card.getChildText('NICKNAME')).to.equal('ali');
      expect(card.getChild('N')?.getChildText('GIVEN')).to.equal('Alice');
      expect(card.getChild('TEL')?.getChild('HOME')).to.exist;
    });

    it("lets another account read it, and gives an empty vCard for an account that has none", async () => {
      const answer = await result(bob, iq('get', 'alice@localhost', xml('vCard', { xmlns: NS_VCARD })));
      expect(answer.attrs.from).to.equal('alice@localhost');
      expect(answer.getChild('vCard', NS_VCARD)?.getChildText('FN')).to.equal('Alice Liddell');
      const none = await result(bob, iq('get', 'carol@localhost', xml('vCard', { xmlns: NS_VCARD })));
      const empty = none.getChild('vCard', NS_VCARD);
      expect(empty).to.exist;
      expect(empty!.getChildElements()).to.have.length(0);
      expect(await request(bob, iq('get', 'nobody@localhost', xml('vCard', { xmlns: NS_VCARD })))).to.equal('service-unavailable');
    });

    it("refuses a set on another account's vCard with <forbidden/>, and a vCard over max_size", async () => {
      expect(await request(bob, iq('set', 'alice@localhost', vcard('Mallory', 'm')))).to.equal('forbidden');
      const answer = await result(bob, iq('get', 'alice@localhost', xml('vCard', { xmlns: NS_VCARD })));
      expect(answer.getChild('vCard', NS_VCARD)?.getChildText('FN')).to.equal('Alice Liddell');
      const huge = xml('vCard', { xmlns: NS_VCARD }, xml('DESC', {}, 'x'.repeat(5000)));
      expect(await request(bob, iq('set', undefined, huge))).to.equal('not-acceptable');
    });

    it('advertises vcard-temp for the server and for accounts', () => {
      expect(t.server.services.xmpp.disco.features('server')).to.include(NS_VCARD);
      expect(t.server.services.xmpp.disco.features('account')).to.include(NS_VCARD);
    });
  });

  describe('jabber:iq:private (mod_private)', () => {
    const bookmarks = () =>
      xml('storage', { xmlns: 'storage:bookmarks' }, xml('conference', { jid: 'tea@conference.localhost', autojoin: 'true', name: 'Tea' }, xml('nick', {}, 'ali')));

    it('stores an element and gives it back; another namespace is empty', async () => {
      await result(alice, iq('set', undefined, xml('query', { xmlns: NS_PRIVATE }, bookmarks())));
      const answer = await result(alice, iq('get', undefined, xml('query', { xmlns: NS_PRIVATE }, xml('storage', { xmlns: 'storage:bookmarks' }))));
      const storage = answer.getChild('query', NS_PRIVATE)?.getChild('storage', 'storage:bookmarks');
      expect(storage?.getChild('conference')?.attrs.jid).to.equal('tea@conference.localhost');
      expect(storage?.getChild('conference')?.getChildText('nick')).to.equal('ali');

      const other = await result(alice, iq('get', undefined, xml('query', { xmlns: NS_PRIVATE }, xml('prefs', { xmlns: 'urn:example:prefs' }))));
      const prefs = other.getChild('query', NS_PRIVATE)?.getChild('prefs', 'urn:example:prefs');
      expect(prefs).to.exist;
      expect(prefs!.getChildElements()).to.have.length(0);
    });

    it('replaces what a namespace held', async () => {
      await result(alice, iq('set', undefined, xml('query', { xmlns: NS_PRIVATE }, xml('storage', { xmlns: 'storage:bookmarks' }))));
      const answer = await result(alice, iq('get', undefined, xml('query', { xmlns: NS_PRIVATE }, xml('storage', { xmlns: 'storage:bookmarks' }))));
      expect(answer.getChild('query', NS_PRIVATE)?.getChild('storage', 'storage:bookmarks')?.getChildElements()).to.have.length(0);
    });

    it("refuses another account's data with <forbidden/> and reserved or missing namespaces", async () => {
      const get = xml('query', { xmlns: NS_PRIVATE }, xml('storage', { xmlns: 'storage:bookmarks' }));
      expect(await request(bob, iq('get', 'alice@localhost', get))).to.equal('forbidden');
      expect(await request(bob, iq('set', 'alice@localhost', xml('query', { xmlns: NS_PRIVATE }, bookmarks())))).to.equal('forbidden');
      // A child without xmlns is in jabber:iq:private itself: reserved.
      expect(await request(alice, iq('set', undefined, xml('query', { xmlns: NS_PRIVATE }, xml('data'))))).to.equal('not-acceptable');
      expect(await request(alice, iq('set', undefined, xml('query', { xmlns: NS_PRIVATE }, xml('x', { xmlns: 'jabber:client' }))))).to.equal('not-acceptable');
      expect(await request(alice, iq('set', undefined, xml('query', { xmlns: NS_PRIVATE })))).to.equal('not-acceptable');
      expect(await request(alice, iq('get', undefined, xml('query', { xmlns: NS_PRIVATE })))).to.equal('bad-request');
    });
  });

  describe('jabber:iq:last (mod_last)', () => {
    it('answers the server uptime in seconds', async () => {
      const answer = await result(bob, iq('get', 'localhost', xml('query', { xmlns: NS_LAST })));
      const seconds = Number(answer.getChild('query', NS_LAST)?.attrs.seconds);
      expect(seconds).to.be.a('number').and.to.be.at.least(0);
      expect(seconds).to.be.at.most((Date.now() - t.server.services.server.startedAt) / 1000 + 1);
    });

    it('records the time and status of the last logout, and answers 0 while the account is online', async () => {
      const dora = await login(t, { user: 'dora', password: 'dora-pw', resource: 'one' });
      const second = await login(t, { user: 'dora', password: 'dora-pw', resource: 'two' });
      await dora.send(xml('presence'));
      await dora.send(xml('presence', { type: 'unavailable' }, xml('status', {}, 'Gone fishing')));
      await stopAll(dora);
      await pause(200);
      // Another session remains: nothing recorded yet.
      expect(await request(second, iq('get', undefined, xml('query', { xmlns: NS_LAST })))).to.equal('item-not-found');
      await stopAll(second);
      await pause(1200);

      const back = await login(t, { user: 'dora', password: 'dora-pw', resource: 'three' });
      try {
        // Bound but not available (no initial presence): the last logout counts.
        const answer = await result(back, iq('get', undefined, xml('query', { xmlns: NS_LAST })));
        const query = answer.getChild('query', NS_LAST)!;
        expect(Number(query.attrs.seconds)).to.be.within(1, 5);
        // The status of the last presence of the last session: 'two' never sent one.
        expect(query.text()).to.equal('');

        await back.send(xml('presence'));
        await pause(100);
        const online = await result(back, iq('get', undefined, xml('query', { xmlns: NS_LAST })));
        expect(online.getChild('query', NS_LAST)?.attrs.seconds).to.equal('0');
      } finally {
        await stopAll(back);
      }
    });

    it('keeps the status text of the unavailable presence', async () => {
      const carol = await login(t, { user: 'carol', password: 'carol-pw' });
      await carol.send(xml('presence'));
      await carol.send(xml('presence', { type: 'unavailable' }, xml('status', {}, 'Gone fishing')));
      await stopAll(carol);
      await pause(200);
      const again = await login(t, { user: 'carol', password: 'carol-pw' });
      try {
        const answer = await result(again, iq('get', undefined, xml('query', { xmlns: NS_LAST })));
        expect(answer.getChild('query', NS_LAST)?.text()).to.equal('Gone fishing');
      } finally {
        await stopAll(again);
      }
    });

    it("refuses another account's last activity without a presence subscription, and unknown accounts", async () => {
      expect(await request(bob, iq('get', 'carol@localhost', xml('query', { xmlns: NS_LAST })))).to.equal('forbidden');
      expect(await request(bob, iq('get', 'nobody@localhost', xml('query', { xmlns: NS_LAST })))).to.equal('service-unavailable');
    });

    it('forgets the last activity of a removed account', async () => {
      expect((await t.api('unregister', { user: 'carol', host: 'localhost' }, { basic: ADMIN })).status).to.equal(200);
      await t.register('carol', 'localhost', 'carol-pw');
      const carol = await login(t, { user: 'carol', password: 'carol-pw' });
      try {
        expect(await request(carol, iq('get', undefined, xml('query', { xmlns: NS_LAST })))).to.equal('item-not-found');
      } finally {
        await stopAll(carol);
      }
    });
  });

  describe('removing an account', () => {
    it('deletes its vCard and private data', async () => {
      const dora = await login(t, { user: 'dora', password: 'dora-pw' });
      try {
        await result(dora, iq('set', undefined, vcard('Dora', 'd')));
        await result(dora, iq('set', undefined, xml('query', { xmlns: NS_PRIVATE }, xml('note', { xmlns: 'urn:example:notes' }, 'secret'))));
      } finally {
        await stopAll(dora);
      }
      expect((await t.api('unregister', { user: 'dora', host: 'localhost' }, { basic: ADMIN })).status).to.equal(200);
      await t.register('dora', 'localhost', 'dora-pw');
      const card = await result(bob, iq('get', 'dora@localhost', xml('vCard', { xmlns: NS_VCARD })));
      expect(card.getChild('vCard', NS_VCARD)?.getChildElements()).to.have.length(0);
      const reborn = await login(t, { user: 'dora', password: 'dora-pw' });
      try {
        const answer = await result(reborn, iq('get', undefined, xml('query', { xmlns: NS_PRIVATE }, xml('note', { xmlns: 'urn:example:notes' }))));
        expect(answer.getChild('query', NS_PRIVATE)?.getChild('note', 'urn:example:notes')?.text()).to.equal('');
      } finally {
        await stopAll(reborn);
      }
    });
  });
});

describe('jabber:iq:last with mod_roster: contacts with a presence subscription may ask', () => {
  let t: TestServer;

  before(async () => {
    t = await TestServer.start(xmppConfig({ mod_roster: {}, mod_last: {} }));
    for (const user of ['carol', 'bob', 'eve']) await t.server.services.accounts.register(user, 'localhost', `${user}-pw`);
  });
  after(() => t.stop());

  it("answers a contact carol granted her presence to, and refuses anyone else", async () => {
    const carol = await login(t, { user: 'carol', password: 'carol-pw' });
    const bob = await login(t, { user: 'bob', password: 'bob-pw' });
    const eve = await login(t, { user: 'eve', password: 'eve-pw' });
    try {
      await carol.send(xml('presence'));
      const asked = next(carol, (s) => s.is('presence') && s.attrs.type === 'subscribe');
      await bob.send(xml('presence', { type: 'subscribe', to: 'carol@localhost' }));
      expect((await asked).attrs.from).to.equal('bob@localhost');
      await carol.send(xml('presence', { type: 'subscribed', to: 'bob@localhost' }));
      await carol.send(xml('presence', { type: 'unavailable' }, xml('status', {}, 'Out to lunch')));
      await stopAll(carol);
      await pause(200);

      const answer = await result(bob, iq('get', 'carol@localhost', xml('query', { xmlns: NS_LAST })));
      expect(answer.getChild('query', NS_LAST)?.text()).to.equal('Out to lunch');
      expect(await request(eve, iq('get', 'carol@localhost', xml('query', { xmlns: NS_LAST })))).to.equal('forbidden');
    } finally {
      await stopAll(carol, bob, eve);
    }
  });
});

describe('vCard fields by name and subname (the vCard service)', () => {
  const card = () =>
    parseElement(
      `<vCard xmlns='vcard-temp'><FN>Alice</FN><N><FAMILY>Liddell</FAMILY></N>` +
        `<TEL><HOME/><VOICE/><NUMBER>111</NUMBER></TEL><TEL><WORK/><NUMBER>222</NUMBER></TEL><TEL><HOME/><NUMBER>333</NUMBER></TEL>` +
        `<EMAIL><INTERNET/><USERID>a@example.org</USERID></EMAIL></vCard>`,
    );

  it('reads single fields, child fields and flagged entries', () => {
    const vcard = card();
    expect(readField(vcard, 'FN')).to.deep.equal(['Alice']);
    expect(readField(vcard, 'nickname')).to.deep.equal([]);
    expect(readField(vcard, 'N', 'FAMILY')).to.deep.equal(['Liddell']);
    expect(readField(vcard, 'N', 'GIVEN')).to.deep.equal([]);
    expect(readField(vcard, 'TEL', 'HOME')).to.deep.equal(['111', '333']);
    expect(readField(vcard, 'TEL', 'WORK')).to.deep.equal(['222']);
    expect(readField(vcard, 'EMAIL', 'USERID')).to.deep.equal(['a@example.org']);
  });

  it('writes a field, keeping the rest of the vCard', () => {
    let vcard: XmlElement = card();
    vcard = writeField(vcard, 'FN', undefined, ['Alice L.']);
    vcard = writeField(vcard, 'N', 'GIVEN', ['Alice']);
    vcard = writeField(vcard, 'TEL', 'HOME', ['999']);
    vcard = writeField(vcard, 'ORG', 'ORGNAME', ['Wonderland']);
    vcard = writeField(vcard, 'EMAIL', 'USERID', ['a@example.org', 'b@example.org']);
    expect(readField(vcard, 'FN')).to.deep.equal(['Alice L.']);
    expect(readField(vcard, 'N', 'FAMILY')).to.deep.equal(['Liddell']);
    expect(readField(vcard, 'N', 'GIVEN')).to.deep.equal(['Alice']);
    expect(readField(vcard, 'TEL', 'HOME')).to.deep.equal(['999']);
    expect(readField(vcard, 'TEL', 'WORK')).to.deep.equal(['222']);
    expect(readField(vcard, 'ORG', 'ORGNAME')).to.deep.equal(['Wonderland']);
    expect(readField(vcard, 'EMAIL', 'USERID')).to.deep.equal(['a@example.org', 'b@example.org']);
    // Written entries are proper XEP-0054: the flag plus the value child.
    const home = vcard.getChildren('TEL').find((tel) => tel.getChild('HOME'));
    expect(home?.getChildText('NUMBER')).to.equal('999');
    // No values removes the field.
    vcard = writeField(vcard, 'TEL', 'HOME', []);
    expect(readField(vcard, 'TEL', 'HOME')).to.deep.equal([]);
    expect(readField(vcard, 'TEL', 'WORK')).to.deep.equal(['222']);
    // The original is untouched.
    expect(readField(card(), 'FN')).to.deep.equal(['Alice']);
  });
});

for (const database of testDatabases()) {
  describe(`vCard, private and last activity storage on ${database.name}`, () => {
    let t: TestServer;

    before(async () => {
      const settings = await database.settings('/tmp');
      const config = { ...xmppConfig(MODULES), ...serverSqlConfig(settings) };
      t = await TestServer.start(config);
      await t.bootstrapAdmin();
      for (const user of ['alice', 'bob']) await t.server.services.accounts.register(user, 'localhost', `${user}-pw`);
    });
    after(async () => {
      await t?.stop();
      await database.cleanup();
    });

    it('round-trips each module through the database', async () => {
      const alice = await login(t, { user: 'alice', password: 'alice-pw' });
      try {
        await result(alice, iq('set', undefined, vcard('Ålice ✓', 'ali')));
        await result(alice, iq('set', undefined, vcard('Ålice ✓✓', 'ali')));
        await result(alice, iq('set', undefined, xml('query', { xmlns: NS_PRIVATE }, xml('prefs', { xmlns: 'urn:example:prefs' }, 'v1'))));
        await result(alice, iq('set', undefined, xml('query', { xmlns: NS_PRIVATE }, xml('prefs', { xmlns: 'urn:example:prefs' }, 'v2'))));
        await alice.send(xml('presence'));
        await alice.send(xml('presence', { type: 'unavailable' }, xml('status', {}, 'bye ✓')));
      } finally {
        await stopAll(alice);
      }
      await pause(200);
      const bob = await login(t, { user: 'bob', password: 'bob-pw' });
      const again = await login(t, { user: 'alice', password: 'alice-pw' });
      try {
        const card = await result(bob, iq('get', 'alice@localhost', xml('vCard', { xmlns: NS_VCARD })));
        expect(card.getChild('vCard', NS_VCARD)?.getChildText('FN')).to.equal('Ålice ✓✓');
        const stored = await result(again, iq('get', undefined, xml('query', { xmlns: NS_PRIVATE }, xml('prefs', { xmlns: 'urn:example:prefs' }))));
        expect(stored.getChild('query', NS_PRIVATE)?.getChild('prefs', 'urn:example:prefs')?.text()).to.equal('v2');
        const last = await result(again, iq('get', undefined, xml('query', { xmlns: NS_LAST })));
        expect(last.getChild('query', NS_LAST)?.text()).to.equal('bye ✓');
      } finally {
        await stopAll(bob, again);
      }
    });
  });
}
