/**
 * Service discovery (XEP-0030), ping (XEP-0199) and software version (XEP-0092) with real clients: what
 * the server announces follows the enabled modules; idle clients are pinged and silent ones dropped.
 */
import { expect } from 'chai';
import { release, type } from 'node:os';
import { KERNEL_VERSION } from '@service/kernel';
import { TestServer } from '../support/server.js';
import { login, next, stopAll, subscribe, xml, xmppConfig, type Client, type Element } from '../support/xmpp.js';

const DISCO_INFO = 'http://jabber.org/protocol/disco#info';
const DISCO_ITEMS = 'http://jabber.org/protocol/disco#items';

function features(query: Element): string[] {
  return query.getChildren('feature').map((f) => f.attrs.var!);
}

async function iq(client: Client, type: 'get' | 'set', to: string | undefined, payload: Element): Promise<Element> {
  return client.iqCaller.request(xml('iq', { type, to }, payload));
}

async function iqError(client: Client, type: 'get' | 'set', to: string | undefined, payload: Element): Promise<string> {
  return (await iqErrorElement(client, type, to, payload)).getChildElements()[0]!.name;
}

/** The <error/> element of the answer, which must be an error. */
async function iqErrorElement(client: Client, type: 'get' | 'set', to: string | undefined, payload: Element): Promise<Element> {
  try {
    await iq(client, type, to, payload);
  } catch (err) {
    if ((err as { element?: Element }).element) return (err as { element: Element }).element;
    throw err;
  }
  throw new Error('expected an error');
}

describe('XMPP service discovery, ping and version', () => {
  describe('with the modules enabled', () => {
    let t: TestServer;
    let alice: Client;
    let bob: Client;
    let carol: Client;

    before(async () => {
      const modules = { mod_disco: {}, mod_ping: {}, mod_version: {}, mod_carboncopy: {}, mod_blocking: {}, mod_privacy: {}, mod_roster: {}, mod_presence: {} };
      t = await TestServer.start(xmppConfig(modules));
      for (const user of ['alice', 'bob', 'carol']) await t.server.services.accounts.register(user, 'localhost', `${user}-pw`);
      alice = await login(t, { user: 'alice', password: 'alice-pw', resource: 'a' });
      bob = await login(t, { user: 'bob', password: 'bob-pw', resource: 'b' });
      carol = await login(t, { user: 'carol', password: 'carol-pw', resource: 'c' });
      // Carol may see alice's presence (alice's roster: carol, 'from'); bob has no subscription at all.
      for (const client of [alice, carol]) await client.send(xml('presence'));
      await subscribe(carol, 'carol@localhost', alice, 'alice@localhost');
    });
    after(async () => {
      await stopAll(alice, bob, carol);
      await t.stop();
    });

    it('disco#info of the server: identity server/im and the features of the enabled modules', async () => {
      const result = await iq(alice, 'get', 'localhost', xml('query', { xmlns: DISCO_INFO }));
      expect(result.attrs.from).to.equal('localhost');
      const query = result.getChild('query', DISCO_INFO)!;
      const identity = query.getChild('identity')!;
      expect(identity.attrs).to.include({ category: 'server', type: 'im' });
      expect(features(query)).to.include.members([
        DISCO_INFO,
        DISCO_ITEMS,
        'urn:xmpp:ping',
        'jabber:iq:version',
        'urn:xmpp:carbons:2',
        'urn:xmpp:blocking',
        'jabber:iq:privacy',
      ]);
    });

    it('disco#items of the server is empty; a node query is item-not-found', async () => {
      const result = await iq(alice, 'get', 'localhost', xml('query', { xmlns: DISCO_ITEMS }));
      expect(result.getChild('query', DISCO_ITEMS)!.getChildren('item')).to.have.length(0);
      expect(await iqError(alice, 'get', 'localhost', xml('query', { xmlns: DISCO_INFO, node: 'nothing' }))).to.equal('item-not-found');
      expect(await iqError(alice, 'get', 'localhost', xml('query', { xmlns: DISCO_ITEMS, node: 'nothing' }))).to.equal('item-not-found');
    });

    it('disco#info of an account: identity account/registered, for itself and for a contact with a presence subscription', async () => {
      for (const [client, to] of [[alice, undefined], [alice, 'alice@localhost'], [carol, 'alice@localhost']] as const) {
        const result = await iq(client, 'get', to, xml('query', { xmlns: DISCO_INFO }));
        const query = result.getChild('query', DISCO_INFO)!;
        expect(query.getChild('identity')!.attrs).to.include({ category: 'account', type: 'registered' });
        expect(features(query)).to.include(DISCO_INFO).and.include('urn:xmpp:carbons:2');
      }
      const items = await iq(carol, 'get', 'alice@localhost', xml('query', { xmlns: DISCO_ITEMS }));
      expect(items.getChild('query', DISCO_ITEMS)!.getChildren('item')).to.have.length(0);
      expect(await iqError(carol, 'get', 'alice@localhost', xml('query', { xmlns: DISCO_ITEMS, node: 'nothing' }))).to.equal('item-not-found');
    });

    // XEP-0030 §8: an account is not revealed to whom it does not show its presence, so such a requester
    // gets exactly what it would get for an account that does not exist.
    const unentitled = () =>
      [
        [bob, 'alice@localhost'], // no subscription
        [alice, 'carol@localhost'], // a subscription the other way: carol's roster has alice as 'to' only
        [bob, 'nobody@localhost'], // no such account
      ] as const;

    it('disco#info of an account to anyone not entitled to its presence, or of no account, is <service-unavailable/> (§8)', async () => {
      const errors: string[] = [];
      for (const [client, to] of unentitled()) {
        for (const node of [undefined, 'nothing']) {
          const error = await iqErrorElement(client, 'get', to, xml('query', { xmlns: DISCO_INFO, node }));
          expect(error.getChildElements()[0]!.name, `${to} ${node ?? ''}`).to.equal('service-unavailable');
          errors.push(error.toString());
        }
      }
      // Not even the error's wording tells an existing account from a missing one.
      expect(new Set(errors).size).to.equal(1);
    });

    it('disco#items of an account to anyone not entitled to its presence, or of no account, is an empty result (§8)', async () => {
      const answers: string[] = [];
      for (const [client, to] of unentitled()) {
        for (const node of [undefined, 'nothing']) {
          const result = await iq(client, 'get', to, xml('query', { xmlns: DISCO_ITEMS, node }));
          expect(result.attrs.from).to.equal(to);
          answers.push(result.getChild('query', DISCO_ITEMS)!.toString());
        }
      }
      expect(new Set(answers)).to.deep.equal(new Set([`<query xmlns="${DISCO_ITEMS}"/>`]));
    });

    it('answers a ping to the server with an empty result', async () => {
      const result = await iq(alice, 'get', 'localhost', xml('ping', { xmlns: 'urn:xmpp:ping' }));
      expect(result.attrs.type).to.equal('result');
      expect(result.attrs.from).to.equal('localhost');
      expect(result.children).to.have.length(0);
    });

    it('answers jabber:iq:version with the kernel version and the OS', async () => {
      const result = await iq(alice, 'get', 'localhost', xml('query', { xmlns: 'jabber:iq:version' }));
      const query = result.getChild('query', 'jabber:iq:version')!;
      expect(query.getChildText('name')).to.equal('service');
      expect(query.getChildText('version')).to.equal(KERNEL_VERSION);
      expect(query.getChildText('os')).to.equal(`${type()} ${release()}`);
    });
  });

  describe('without the modules', () => {
    let t: TestServer;
    let alice: Client;

    before(async () => {
      t = await TestServer.start(xmppConfig({ mod_disco: {}, mod_version: { show_os: false } }));
      await t.server.services.accounts.register('alice', 'localhost', 'alice-pw');
      alice = await login(t, { user: 'alice', password: 'alice-pw' });
    });
    after(async () => {
      await stopAll(alice);
      await t.stop();
    });

    it('lists only the features of the modules that run', async () => {
      const result = await iq(alice, 'get', 'localhost', xml('query', { xmlns: DISCO_INFO }));
      const listed = features(result.getChild('query', DISCO_INFO)!);
      expect(listed).to.include('jabber:iq:version');
      expect(listed).not.to.include('urn:xmpp:ping');
      expect(listed).not.to.include('urn:xmpp:carbons:2');
      expect(await iqError(alice, 'get', 'localhost', xml('ping', { xmlns: 'urn:xmpp:ping' }))).to.equal('service-unavailable');
    });

    it('leaves the OS out with show_os: false', async () => {
      const result = await iq(alice, 'get', 'localhost', xml('query', { xmlns: 'jabber:iq:version' }));
      expect(result.getChild('query', 'jabber:iq:version')!.getChild('os')).to.equal(undefined);
    });
  });

  describe('pinging idle clients', () => {
    let t: TestServer;

    before(async () => {
      t = await TestServer.start(xmppConfig({ mod_ping: { send_pings: true, ping_interval: 1, ping_ack_timeout: 1 } }));
      await t.server.services.accounts.register('alice', 'localhost', 'alice-pw');
    });
    after(() => t.stop());

    it('pings a client that stays silent, and keeps it when it answers', async () => {
      const alice = await login(t, { user: 'alice', password: 'alice-pw', resource: 'answers' });
      try {
        const ping = await next(alice, (s) => s.is('iq') && s.attrs.type === 'get' && s.getChild('ping', 'urn:xmpp:ping') !== undefined, 4000);
        expect(ping.attrs.from).to.equal('localhost');
        expect(ping.attrs.to).to.equal('alice@localhost/answers');
        // @xmpp/client answers pings by itself: after a second ping the session is still there.
        await next(alice, (s) => s.is('iq') && s.getChild('ping', 'urn:xmpp:ping') !== undefined, 4000);
        const resources = t.server.services.xmpp.localSessions.byAccount('alice@localhost').map((s) => s.resource);
        expect(resources).to.include('answers');
      } finally {
        await stopAll(alice);
      }
    });

    it('closes the stream of a client that does not answer, with <connection-timeout/>', async () => {
      const alice = await login(t, { user: 'alice', password: 'alice-pw', resource: 'silent' });
      // Swallow the client's automatic answers to pings.
      const send = alice.send.bind(alice);
      alice.send = async (...elements: Element[]) => {
        const kept = elements.filter((e) => !(e.name === 'iq' && e.attrs.type === 'result' && String(e.attrs.id).startsWith('ping-')));
        if (kept.length) await send(...kept);
      };
      const closed = new Promise<string>((resolve) => alice.on('error', (err: { condition?: string }) => resolve(err.condition ?? '')));
      try {
        expect(await closed).to.equal('connection-timeout');
        expect(t.server.services.xmpp.localSessions.get('alice@localhost/silent')).to.equal(undefined);
      } finally {
        await stopAll(alice);
      }
    });
  });
});
