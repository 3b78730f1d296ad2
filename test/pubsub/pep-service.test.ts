/**
 * The PEP service other modules use (`pepService` of `@service/mod_pubsub/api`), reached through a probe
 * plugin that consumes it as a module would: publishing as an account auto-creates the node with the
 * publish-options and notifies the account's contacts like a client's publish; an existing node's options
 * are preconditions; items come back newest first with their payloads; retract and deleteNode answer
 * whether there was something to remove.
 */
import { cp, mkdir } from 'node:fs/promises';
import { expect } from 'chai';
import { StanzaError, x } from '@service/plugin-api';
import type { PepApi } from '@service/mod_pubsub/api';
import { TestServer } from '../support/server.js';
import { login, stopAll, xmppConfig, type Client } from '../support/xmpp.js';
import { NS_BOOKMARKS, NS_EVENT, announceCaps, befriend, event, items } from './helpers.js';

const PROBE = new URL('./probe/mod_pep_probe/', import.meta.url).pathname;

function pepApi(): PepApi {
  const api = (globalThis as { pepProbeApi?: PepApi }).pepProbeApi;
  if (!api) throw new Error('the mod_pep_probe plugin is not running');
  return api;
}

describe('The PEP service for other modules (pepService, mod_pubsub)', function () {
  this.timeout(60_000);
  let t: TestServer;
  let alice: Client;

  before(async () => {
    const config = xmppConfig({ mod_pubsub: {}, mod_roster: {}, mod_presence: {}, mod_admin_extra: {}, mod_pep_probe: {} });
    t = await TestServer.start(config, {
      prepare: async (dataDir) => {
        await mkdir(`${dataDir}/plugins`, { recursive: true });
        await cp(PROBE, `${dataDir}/plugins/mod_pep_probe`, { recursive: true });
      },
    });
    await t.bootstrapAdmin();
    for (const user of ['alice', 'bob']) await t.server.services.accounts.register(user, 'localhost', `${user}-pw`);
    await befriend(t, 'alice', 'bob');
    alice = await login(t, { user: 'alice', password: 'alice-pw', resource: 'r' });
    await announceCaps(alice, [`${NS_BOOKMARKS}+notify`]);
  });
  after(async () => {
    await stopAll(alice);
    await t?.stop();
  });

  it('publishes as the account with publish-options, notifying its resources; a client reads the item', async () => {
    const notified = event(alice, 'alice@localhost', NS_BOOKMARKS);
    const options = { 'pubsub#access_model': 'whitelist', 'pubsub#max_items': 'max', 'pubsub#send_last_published_item': 'never', 'pubsub#persist_items': 'true' };
    const id = await pepApi().publish('alice@localhost', NS_BOOKMARKS, x('conference', { xmlns: NS_BOOKMARKS, name: 'Room' }), { itemId: 'room@conference.localhost', publishOptions: options });
    expect(id).to.equal('room@conference.localhost');
    expect((await notified).getChild('event', NS_EVENT)!.getChild('items')!.getChild('item')!.attrs.id).to.equal(id);
    expect((await items(alice, 'alice@localhost', NS_BOOKMARKS)).map((i) => i.attrs.id)).to.deep.equal([id]);
    const err = await pepApi()
      .publish('alice@localhost', NS_BOOKMARKS, x('conference', { xmlns: NS_BOOKMARKS }), { publishOptions: { 'pubsub#access_model': 'open' } })
      .catch((e: unknown) => e);
    expect(err).to.be.instanceOf(StanzaError);
    expect((err as StanzaError).condition).to.equal('conflict');
  });

  it('reads items newest first, retracts and deletes, saying whether there was something', async () => {
    const api = pepApi();
    await api.publish('alice@localhost', NS_BOOKMARKS, x('conference', { xmlns: NS_BOOKMARKS, name: 'Other' }), { itemId: 'other@conference.localhost' });
    const list = await api.items('alice@localhost', NS_BOOKMARKS);
    expect(list!.map((i) => i.id)).to.deep.equal(['other@conference.localhost', 'room@conference.localhost']);
    expect(list![0]!.payload!.attr('name')).to.equal('Other');
    expect(await api.items('alice@localhost', 'urn:example:none')).to.equal(undefined);
    expect(await api.retract('alice@localhost', NS_BOOKMARKS, 'other@conference.localhost')).to.equal(true);
    expect(await api.retract('alice@localhost', NS_BOOKMARKS, 'other@conference.localhost')).to.equal(false);
    expect(await api.deleteNode('alice@localhost', NS_BOOKMARKS)).to.equal(true);
    expect(await api.deleteNode('alice@localhost', NS_BOOKMARKS)).to.equal(false);
  });
});
