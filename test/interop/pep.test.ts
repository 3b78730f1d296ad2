/**
 * Personal eventing with client software nobody here wrote (mod_pubsub, XEP-0163):
 *
 *   slixmpp (Debian python3-slixmpp)  its xep_0115, xep_0163, xep_0084 and xep_0172 plugins
 *                                     test/interop/clients/slixmpp_pep.py
 *   @xmpp/client (npm)                by hand: avatar (XEP-0084) and OMEMO device list (XEP-0384) with
 *                                     publish-options, as Conversations and Dino publish them
 *
 * slixmpp's caps plugin announces the +notify interests its avatar and nick plugins register, and answers the
 * server's disco#info query: the server verifies that hash, so a notification reaching slixmpp proves the
 * filtering works with a real client's hash. The @xmpp/client accounts announce their capabilities through the
 * test helper (it has no caps plugin).
 */
import { createHash } from 'node:crypto';
import { expect } from 'chai';
import { join } from 'node:path';
import { TestServer } from '../support/server.js';
import { login, stopAll, xml, xmppConfig, type Client } from '../support/xmpp.js';
import { NS_AVATAR_DATA, NS_AVATAR_METADATA, NS_EVENT, NS_NICK, NS_OMEMO_DEVICES, announceCaps, befriend, event, items, publish } from '../pubsub/helpers.js';
import { CA, PYTHON, SCRIPTS, ExternalClient, debianVersion, killAll } from './external.js';

const jidOf = (user: string) => `${user}@localhost`;

describe('PEP interop (mod_pubsub)', function () {
  this.timeout(90_000);
  let t: TestServer;
  const clients: Client[] = [];

  before(async () => {
    t = await TestServer.start(xmppConfig({ mod_pubsub: {}, mod_roster: {}, mod_presence: {}, mod_disco: {}, mod_admin_extra: {} }));
    await t.bootstrapAdmin();
    for (const user of ['sli', 'js', 'js2']) await t.server.services.accounts.register(user, 'localhost', `${user}-pw`);
    await befriend(t, 'sli', 'js');
    await befriend(t, 'js', 'js2');
  });
  afterEach(async () => {
    await killAll();
  });
  after(async () => {
    await stopAll(...clients);
    await t?.stop();
  });

  const helper = async (user: string, resource: string, notify: string[]): Promise<Client> => {
    const client = await login(t, { user, password: `${user}-pw`, resource });
    clients.push(client);
    await announceCaps(client, notify);
    return client;
  };

  describe(`slixmpp ${debianVersion('python3-slixmpp')} (Debian python3-slixmpp, xep_0084 and xep_0172)`, () => {
    const run = (resource: string, args: string[]) =>
      ExternalClient.spawn(`slixmpp (sli/${resource})`, [PYTHON, join(SCRIPTS, 'slixmpp_pep.py'), '--jid', `${jidOf('sli')}/${resource}`, '--password', 'sli-pw', '--port', String(t.server.portOf('service_c2s')), '--ca', CA, ...args], { timeoutMs: 60_000 });

    it('publishes an avatar and a nick that a contact is notified of and retrieves', async () => {
      const js = await helper('js', 'a', [`${NS_AVATAR_METADATA}+notify`, `${NS_NICK}+notify`]);
      const metadata = event(js, jidOf('sli'), NS_AVATAR_METADATA, 30_000);
      const nick = event(js, jidOf('sli'), NS_NICK, 30_000);
      const sli = run('pub', ['--publish-avatar', 'a slixmpp avatar', '--publish-nick', 'Sli']);
      expect((await sli.exit(50_000)).code, sli.diagnostics()).to.equal(0);
      const id = (await sli.event('published avatar', (e) => e.event === 'published_avatar')).id as string;
      expect(id).to.equal(createHash('sha1').update('a slixmpp avatar').digest('hex'));
      const info = (await metadata).getChild('event', NS_EVENT)!.getChild('items')!.getChild('item')!;
      expect(info.attrs.id).to.equal(id);
      expect(info.getChild('metadata', NS_AVATAR_METADATA)!.getChild('info')!.attrs.bytes).to.equal(String('a slixmpp avatar'.length));
      expect((await nick).getChild('event', NS_EVENT)!.getChild('items')!.getChild('item')!.getChildText('nick', NS_NICK)).to.equal('Sli');
      const [data] = await items(js, jidOf('sli'), NS_AVATAR_DATA, { ids: [id] });
      expect(Buffer.from(data!.getChildText('data', NS_AVATAR_DATA)!, 'base64').toString()).to.equal('a slixmpp avatar');
    });

    it('is notified of a contact\'s avatar through its own caps (+notify verified by hash) and retrieves the data', async () => {
      const sli = run('sub', ['--expect-avatar-from', jidOf('js'), '--expect-nick-from', jidOf('js'), '--wait', '30']);
      await sli.event('online', (e) => e.event === 'online', 30_000);
      const js = clients[0]!;
      const bytes = Buffer.from('an avatar from @xmpp/client');
      const id = createHash('sha1').update(bytes).digest('hex');
      // Give slixmpp's caps a moment to be asked for and verified; a notification before that would be filtered out.
      await waitUntil(async () => (await t.server.services.storage.db()('pubsub_caps')).length >= 2, 20_000);
      await publish(js, NS_AVATAR_DATA, xml('data', { xmlns: NS_AVATAR_DATA }, bytes.toString('base64')), { id });
      await publish(js, NS_AVATAR_METADATA, xml('metadata', { xmlns: NS_AVATAR_METADATA }, xml('info', { id, bytes: String(bytes.length), type: 'image/png' })), { id });
      await publish(js, NS_NICK, xml('nick', { xmlns: NS_NICK }, 'Js'));
      expect((await sli.exit(50_000)).code, sli.diagnostics()).to.equal(0);
      expect((await sli.event('avatar metadata', (e) => e.event === 'avatar_metadata')).id).to.equal(id);
      expect((await sli.event('avatar data', (e) => e.event === 'avatar_data')).sha1).to.equal(id);
      expect((await sli.event('nick', (e) => e.event === 'nick')).nick).to.equal('Js');
    });
  });

  describe('@xmpp/client (npm): avatar and OMEMO device list', () => {
    it('publishes an OMEMO device list with open access and a bundle, which a contact receives and a stranger may read', async () => {
      const js = await login(t, { user: 'js', password: 'js-pw', resource: 'omemo' });
      clients.push(js);
      const js2 = await helper('js2', 'b', [`${NS_OMEMO_DEVICES}+notify`, `${NS_AVATAR_METADATA}+notify`]);
      const open = { 'pubsub#access_model': 'open' };
      const devices = event(js2, jidOf('js'), NS_OMEMO_DEVICES);
      await publish(js, NS_OMEMO_DEVICES, xml('list', { xmlns: 'eu.siacs.conversations.axolotl' }, xml('device', { id: '1234' })), { id: 'current', publishOptions: open });
      const list = (await devices).getChild('event', NS_EVENT)!.getChild('items')!.getChild('item')!;
      expect(list.attrs.id).to.equal('current');
      expect(list.getChild('list')!.getChild('device')!.attrs.id).to.equal('1234');
      const bundleNode = 'eu.siacs.conversations.axolotl.bundles:1234';
      await publish(js, bundleNode, xml('bundle', { xmlns: 'eu.siacs.conversations.axolotl' }, xml('signedPreKeyPublic', { signedPreKeyId: '1' }, 'AAAA')), { id: 'current', publishOptions: open });
      // sli is not js2's contact; open access lets anyone fetch the bundle (needed to start an OMEMO session).
      const stranger = await login(t, { user: 'sli', password: 'sli-pw', resource: 'stranger' });
      clients.push(stranger);
      expect((await items(stranger, jidOf('js'), bundleNode)).map((i) => i.attrs.id)).to.deep.equal(['current']);
      // And an avatar from @xmpp/client to @xmpp/client.
      const avatar = event(js2, jidOf('js'), NS_AVATAR_METADATA);
      await publish(js, NS_AVATAR_METADATA, xml('metadata', { xmlns: NS_AVATAR_METADATA }, xml('info', { id: 'abc', bytes: '3', type: 'image/png' })), { id: 'abc' });
      expect((await avatar).getChild('event', NS_EVENT)!.getChild('items')!.getChild('item')!.attrs.id).to.equal('abc');
    });
  });
});

async function waitUntil(condition: () => Promise<boolean>, ms: number): Promise<void> {
  const end = Date.now() + ms;
  while (!(await condition())) {
    if (Date.now() > end) throw new Error('timed out waiting');
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
