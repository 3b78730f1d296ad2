/**
 * Room archives (mod_mam with mod_muc, XEP-0313 §5) on each database: a room with `mam` on archives its
 * groupchat messages with a body (not subject changes), each broadcast with a stanza-id by the room, and a
 * room without it archives nothing and answers no MAM query; queries go to the room's JID with paging and
 * a `with` of an occupant JID, results come from the occupant JIDs, real JIDs shown only in
 * non-anonymous rooms and to moderators; non-members are refused in a members-only room, anyone may read
 * an open one; the history survives a restart from the archive; the purges' `type` selects room archives;
 * a destroyed room loses its archive. On SQLite, slixmpp's xep_0313 plugin pages a room's archive too.
 */
import { expect } from 'chai';
import { CA, PYTHON, ExternalClient } from '../interop/external.js';
import { testDatabases } from '../support/databases.js';
import { serverSqlConfig, TestServer } from '../support/server.js';
import { collect, next, stopAll, xml, type Client, type Element } from '../support/xmpp.js';
import { NS_DATA, NS_MUC_ADMIN, NS_MUC_OWNER, NS_MUC_USER, SERVICE, configure, enter, errorCondition, groupchat, iqError, join, mucConfig, user } from '../muc/helpers.js';
import { ADMIN, NS_MAM, NS_SID, mamQuery, mamRefusal, ok } from './helpers.js';

const ROOM = `archived@${SERVICE}`;

/**
 * slixmpp (Debian python3-slixmpp) querying a room's archive with its xep_0313 plugin and RSM iterator:
 * every page, with each result's occupant JID and body, as JSON lines.
 */
const SLIXMPP_ROOM_QUERY = `
import asyncio, json, ssl, sys
import slixmpp
jid, password, port, ca, room = sys.argv[1:6]
def report(event, **fields):
    print(json.dumps({'event': event, **fields}), flush=True)
class Client(slixmpp.ClientXMPP):
    def __init__(self):
        super().__init__(jid, password)
        self.ca_certs = ca
        self.ok = False
        self.register_plugin('xep_0313')
        self.add_event_handler('session_start', self.start)
    async def start(self, _):
        try:
            pages = self.plugin['xep_0313'].retrieve(jid=slixmpp.JID(room), iterator=True, rsm={'max': 2}, timeout=20)
            async for page in pages:
                report('page', messages=[{'from': str(r['mam_result']['forwarded']['stanza']['from']), 'body': r['mam_result']['forwarded']['stanza']['body']} for r in page['mam']['results']])
            self.ok = True
        except Exception as err:
            report('error', error=repr(err))
        finally:
            self.disconnect()
client = Client()
client.connect(address=('127.0.0.1', int(port)), use_ssl=False, force_starttls=True, disable_starttls=False)
asyncio.get_event_loop().run_until_complete(client.disconnected)
report('done', ok=client.ok)
sys.exit(0 if client.ok else 1)
`;

/** Sends a groupchat message and resolves with the copy the sender got back from the room. */
async function say(client: Client, room: string, body: string): Promise<Element> {
  const echo = next(client, (s) => s.is('message') && s.attrs.type === 'groupchat' && s.attrs.from?.startsWith(`${room}@${SERVICE}/`) === true && s.getChildText('body') === body);
  await client.send(groupchat(room, body));
  return echo;
}

function forwardedOf(result: Element): Element {
  return result.getChild('forwarded')!.getChild('message')!;
}

function realJidOf(message: Element): string | undefined {
  return message.getChild('x', NS_MUC_USER)?.getChild('item')?.attrs.jid as string | undefined;
}

async function features(client: Client, jid: string): Promise<string[]> {
  const info = await client.iqCaller.request(xml('iq', { type: 'get', to: jid }, xml('query', { xmlns: 'http://jabber.org/protocol/disco#info' })));
  return info.getChild('query')!.getChildren('feature').map((f) => f.attrs.var as string);
}

async function waitForRestart(t: TestServer): Promise<void> {
  for (let i = 0; i < 200; i++) {
    await new Promise((r) => setTimeout(r, 100));
    const status = (await t.api('registered_users', { host: 'localhost' }, { basic: ADMIN }).catch(() => ({ status: 0 }))).status;
    if (status === 200) return;
  }
  expect.fail('the server did not come back after restart');
}

for (const database of testDatabases()) {
  describe(`Room archives on ${database.name} (mod_mam, mod_muc)`, function () {
    this.timeout(120_000);
    let t: TestServer;
    let clients: Client[] = [];

    before(async () => {
      const settings = await database.settings('/tmp');
      const config = mucConfig({}, serverSqlConfig(settings));
      const modules = config.modules as Record<string, unknown>;
      modules.mod_mam = {};
      modules.mod_muc_admin = {};
      t = await TestServer.start(config);
      await t.bootstrapAdmin();
      for (const name of ['alice', 'bob', 'carol', 'dave']) await t.server.services.accounts.register(name, 'localhost', `${name}-pw`);
    });
    afterEach(async () => {
      await stopAll(...clients);
      clients = [];
    });
    after(async () => {
      await t?.stop();
      await database.cleanup();
    });

    it('archives the groupchat messages of a room with mam on, with a stanza-id on the broadcast, and nothing of a room without', async () => {
      const alice = await user(t, 'alice');
      const bob = await user(t, 'bob');
      clients = [alice, bob];
      await enter(alice, 'archived', 'Alice');
      await configure(alice, 'archived', { 'muc#roomconfig_persistentroom': '1', mam: '1' });
      await enter(alice, 'plain', 'Alice');
      await configure(alice, 'plain', { 'muc#roomconfig_persistentroom': '1' });
      await enter(bob, 'archived', 'Bob');
      await enter(bob, 'plain', 'Bob');

      expect(await features(bob, ROOM)).to.include.members([NS_MAM, `${NS_MAM}#extended`, NS_SID]);
      expect(await features(bob, `plain@${SERVICE}`)).to.not.include(NS_MAM);

      const atBob = next(bob, (s) => s.getChildText('body') === 'one');
      const echo = await say(alice, 'archived', 'one');
      const ids = [echo, await atBob].map((m) => m.getChild('stanza-id', NS_SID));
      expect(ids[0]?.attrs.by).to.equal(ROOM);
      expect(ids[1]?.attrs.id, 'every occupant gets the same stanza-id').to.equal(ids[0]?.attrs.id);
      // A stanza-id claiming to be the room's is the sender's invention: replaced by the room's own.
      const spoofed = next(alice, (s) => s.getChildText('body') === 'two');
      await alice.send(xml('message', { to: ROOM, type: 'groupchat' }, xml('body', {}, 'two'), xml('stanza-id', { xmlns: NS_SID, by: ROOM, id: 'forged' })));
      const two = await spoofed;
      expect(two.getChildren('stanza-id', NS_SID).map((s) => s.attrs.id)).to.have.length(1).and.not.include('forged');
      await say(bob, 'archived', 'three');
      const subject = next(alice, (s) => s.getChildText('subject') === 'A subject');
      await alice.send(xml('message', { to: ROOM, type: 'groupchat' }, xml('subject', {}, 'A subject')));
      await subject;
      // Chat states and the like (no body) are not archived.
      await alice.send(xml('message', { to: ROOM, type: 'groupchat' }, xml('active', { xmlns: 'http://jabber.org/protocol/chatstates' })));
      const plain = await say(alice, 'plain', 'not archived');
      expect(plain.getChild('stanza-id', NS_SID)).to.equal(undefined);

      const r = await mamQuery(bob, { to: ROOM });
      expect(r.bodies).to.deep.equal(['one', 'two', 'three']);
      expect(r.ids[0]).to.equal(ids[0]!.attrs.id);
      expect(r.complete).to.equal(true);
      const forwarded = r.results.map(forwardedOf);
      expect(forwarded.map((m) => m.attrs.from)).to.deep.equal([`${ROOM}/Alice`, `${ROOM}/Alice`, `${ROOM}/Bob`]);
      expect(forwarded.every((m) => m.attrs.type === 'groupchat')).to.equal(true);
      expect((await mamRefusal(bob, { to: `plain@${SERVICE}` })).condition).to.equal('service-unavailable');
      // The form of form discovery, at the room.
      const form = await bob.iqCaller.request(xml('iq', { type: 'get', to: ROOM }, xml('query', { xmlns: NS_MAM })));
      expect(form.getChild('query', NS_MAM)!.getChild('x', NS_DATA)).to.exist;
      // The room's archive is not the occupants' own: their archives hold none of it.
      expect((await mamQuery(bob)).bodies).to.deep.equal([]);
    });

    it('pages a query to the room JID, filters by occupant JID, and shows real JIDs only to those who may see them', async () => {
      const alice = await user(t, 'alice');
      const bob = await user(t, 'bob');
      clients = [alice, bob];
      await enter(alice, 'archived', 'Alice');
      await enter(bob, 'archived', 'Bob');
      for (let i = 0; i < 5; i++) await say(i % 2 ? bob : alice, 'archived', `p${i}`);

      const first = await mamQuery(bob, { to: ROOM, max: 4 });
      expect(first.bodies).to.deep.equal(['one', 'two', 'three', 'p0']);
      expect(first.complete).to.equal(false);
      const second = await mamQuery(bob, { to: ROOM, max: 4, after: first.last! });
      expect(second.bodies).to.deep.equal(['p1', 'p2', 'p3', 'p4']);
      expect(second.complete).to.equal(true);
      const last = await mamQuery(bob, { to: ROOM, max: 2, before: '' });
      expect(last.bodies).to.deep.equal(['p3', 'p4']);
      expect((await mamQuery(bob, { to: ROOM, with: `${ROOM}/Bob` })).bodies).to.deep.equal(['three', 'p1', 'p3']);
      expect((await mamQuery(bob, { to: ROOM, with: ROOM })).bodies).to.have.length(8);
      // An id of another archive names nothing here.
      expect((await mamRefusal(bob, { to: ROOM, after: 'not-an-id' })).condition).to.equal('item-not-found');

      // Semi-anonymous (the default): a participant sees no real JID, the owner (a moderator) does.
      const byBob = await mamQuery(bob, { to: ROOM, with: `${ROOM}/Alice`, max: 1 });
      expect(realJidOf(forwardedOf(byBob.results[0]!))).to.equal(undefined);
      const byAlice = await mamQuery(alice, { to: ROOM, with: `${ROOM}/Bob`, max: 1 });
      expect(realJidOf(forwardedOf(byAlice.results[0]!))).to.equal('bob@localhost');
      // Non-anonymous: everyone does.
      await configure(alice, 'archived', { 'muc#roomconfig_whois': 'anyone' });
      const open = await mamQuery(bob, { to: ROOM, with: `${ROOM}/Alice`, max: 1 });
      expect(realJidOf(forwardedOf(open.results[0]!))).to.equal('alice@localhost');
      await configure(alice, 'archived', { 'muc#roomconfig_whois': 'moderators' });
      // History never carries them.
      const carol = await user(t, 'carol');
      clients.push(carol);
      const received = collect(carol);
      await enter(carol, 'archived', 'Carol', { history: { maxstanzas: '3' } });
      const history = received.filter((s) => s.getChildText('body'));
      expect(history.map((s) => s.getChildText('body'))).to.deep.equal(['p2', 'p3', 'p4']);
      expect(history.every((s) => realJidOf(s) === undefined)).to.equal(true);
    });

    it('lets anyone query an open room, and only members and occupants a members-only one; never outcasts', async () => {
      const alice = await user(t, 'alice');
      const carol = await user(t, 'carol');
      const dave = await user(t, 'dave');
      clients = [alice, carol, dave];
      // Open: carol is not in the room and reads it, as she could join and read its history.
      expect((await mamQuery(carol, { to: ROOM, max: 1 })).bodies).to.deep.equal(['one']);
      await enter(alice, 'archived', 'Alice');
      await alice.iqCaller.request(xml('iq', { type: 'set', to: ROOM }, xml('query', { xmlns: NS_MUC_ADMIN }, xml('item', { jid: 'dave@localhost', affiliation: 'outcast' }))));
      expect((await mamRefusal(dave, { to: ROOM })).condition).to.equal('forbidden');
      await configure(alice, 'archived', { 'muc#roomconfig_membersonly': '1' });
      const refused = await mamRefusal(carol, { to: ROOM });
      expect(refused.condition).to.equal('forbidden');
      await alice.iqCaller.request(xml('iq', { type: 'set', to: ROOM }, xml('query', { xmlns: NS_MUC_ADMIN }, xml('item', { jid: 'carol@localhost', affiliation: 'member' }))));
      expect((await mamQuery(carol, { to: ROOM, max: 1 })).bodies).to.deep.equal(['one']);
      await configure(alice, 'archived', { 'muc#roomconfig_membersonly': '0' });
      await alice.iqCaller.request(
        xml('iq', { type: 'set', to: ROOM }, xml('query', { xmlns: NS_MUC_ADMIN }, xml('item', { jid: 'carol@localhost', affiliation: 'none' }), xml('item', { jid: 'dave@localhost', affiliation: 'none' }))),
      );
    });

    it('gives the history from the archive after a restart, with the stanza-ids', async () => {
      await t.api('restart', {}, { basic: ADMIN });
      await waitForRestart(t);
      const bob = await user(t, 'bob');
      clients = [bob];
      const all = (await mamQuery(bob, { to: ROOM })).ids;
      const received = collect(bob);
      await enter(bob, 'archived', 'Bob');
      const history = received.filter((s) => s.getChildText('body'));
      // history_size (20) covers the 8 archived messages.
      expect(history.map((s) => s.getChildText('body'))).to.deep.equal(['one', 'two', 'three', 'p0', 'p1', 'p2', 'p3', 'p4']);
      expect(history.map((s) => s.getChild('stanza-id', NS_SID)?.attrs.id)).to.deep.equal(all);
      expect(history.every((s) => s.getChild('delay', 'urn:xmpp:delay')?.attrs.from === ROOM)).to.equal(true);
      // Archiving goes on after the restart.
      await say(bob, 'archived', 'after restart');
      expect((await mamQuery(bob, { to: ROOM, before: '', max: 1 })).bodies).to.deep.equal(['after restart']);
    });

    if (database.name === 'sqlite') {
      it('is paged by slixmpp (xep_0313) at the room JID, results from the occupant JIDs', async () => {
        const slix = ExternalClient.spawn('slixmpp', [PYTHON, '-', 'carol@localhost/slix', 'carol-pw', String(t.server.portOf('service_c2s')), CA, ROOM], { stdin: SLIXMPP_ROOM_QUERY, timeoutMs: 40_000 });
        const done = await slix.event('the query to end', (e) => e.event === 'done', 35_000);
        expect(done.ok, slix.stdout + slix.stderr).to.equal(true);
        const pages = slix.events.filter((e) => e.event === 'page').map((e) => e.messages as Array<{ from: string; body: string }>);
        expect(pages.every((p) => p.length <= 2)).to.equal(true);
        expect(pages.flat().map((m) => m.body)).to.deep.equal(['one', 'two', 'three', 'p0', 'p1', 'p2', 'p3', 'p4', 'after restart']);
        expect(pages.flat()[2]!.from).to.equal(`${ROOM}/Bob`);
      });
    }

    it('purges room archives by type: chat keeps them, groupchat takes them', async () => {
      // At rest, an archiving room is not empty: its history is its archive.
      const empty = async () => (await ok(t, 'rooms_empty_list', { service: SERVICE })) as string[];
      expect(await empty()).to.not.include(ROOM);
      const alice = await user(t, 'alice');
      clients = [alice];
      await enter(alice, 'purged', 'Alice');
      await configure(alice, 'purged', { mam: '1' });
      await say(alice, 'purged', 'old');
      expect((await mamQuery(alice, { to: `purged@${SERVICE}` })).bodies).to.deep.equal(['old']);
      await ok(t, 'delete_old_mam_messages', { type: 'chat', days: 0 });
      expect((await mamQuery(alice, { to: `purged@${SERVICE}` })).bodies).to.deep.equal(['old']);
      // The host's batch purge takes the rooms of its conference service.
      await ok(t, 'delete_old_mam_messages_batch', { host: 'localhost', type: 'groupchat', days: 0, batch_size: 1000, rate: 100000 });
      for (let i = 0; i < 100; i++) {
        if ((await ok(t, 'delete_old_mam_messages_status', { host: 'localhost' })).startsWith('Operation was completed')) break;
        await new Promise((r) => setTimeout(r, 100));
      }
      expect((await mamQuery(alice, { to: `purged@${SERVICE}` })).bodies).to.deep.equal([]);
      expect((await mamQuery(alice, { to: ROOM })).bodies).to.deep.equal([]);
      expect(await empty()).to.include(ROOM);
      await say(alice, 'purged', 'new');
      await ok(t, 'delete_old_mam_messages', { type: 'all', days: 0 });
      expect((await mamQuery(alice, { to: `purged@${SERVICE}` })).bodies).to.deep.equal([]);
    });

    it('removes the archive of a destroyed room, and of a temporary one that empties: a new room of that name starts with none', async () => {
      const alice = await user(t, 'alice');
      clients = [alice];
      await enter(alice, 'doomed', 'Alice');
      await configure(alice, 'doomed', { 'muc#roomconfig_persistentroom': '1', mam: '1' });
      await say(alice, 'doomed', 'before destroy');
      expect((await mamQuery(alice, { to: `doomed@${SERVICE}` })).bodies).to.deep.equal(['before destroy']);
      await alice.iqCaller.request(xml('iq', { type: 'set', to: `doomed@${SERVICE}` }, xml('query', { xmlns: NS_MUC_OWNER }, xml('destroy', {}, xml('reason', {}, 'done')))));
      const received = collect(alice);
      await enter(alice, 'doomed', 'Alice');
      await configure(alice, 'doomed', { mam: '1' });
      expect(received.filter((s) => s.getChildText('body'))).to.deep.equal([]);
      expect((await mamQuery(alice, { to: `doomed@${SERVICE}` })).bodies).to.deep.equal([]);
      // A temporary archiving room that empties goes, with its archive (removed in the background).
      await enter(alice, 'fleeting', 'Alice');
      await configure(alice, 'fleeting', { mam: '1' });
      await say(alice, 'fleeting', 'ephemeral');
      const left = next(alice, (s) => s.is('presence') && s.attrs.type === 'unavailable' && s.attrs.from === `fleeting@${SERVICE}/Alice`);
      await alice.send(xml('presence', { to: `fleeting@${SERVICE}/Alice`, type: 'unavailable' }));
      await left;
      await enter(alice, 'fleeting', 'Alice');
      await configure(alice, 'fleeting', { mam: '1' });
      let remaining = ['ephemeral'];
      for (let i = 0; i < 50 && remaining.length; i++) {
        remaining = (await mamQuery(alice, { to: `fleeting@${SERVICE}` })).bodies;
        if (remaining.length) await new Promise((r) => setTimeout(r, 100));
      }
      expect(remaining).to.deep.equal([]);
      // A room nobody may read yet (locked until configured) answers as a missing room would.
      const locked = await join(alice, 'locked-one', 'Alice');
      expect(errorCondition(locked)).to.equal(undefined);
      const bob = await user(t, 'bob');
      clients.push(bob);
      expect(await iqError(bob, xml('iq', { type: 'set', to: `locked-one@${SERVICE}` }, xml('query', { xmlns: NS_MAM })))).to.equal('item-not-found');
    });
  });
}
