/**
 * Requests that store hundreds of rows at once, on each database, through the real server: a roster item
 * in 600 groups (add_rosteritem, a client's roster set, push_roster), a shared roster group displaying 600
 * groups (srg_create), a privacy list of 600 items (privacy_set, a client's list set) and a <block/> of 600
 * JIDs. One SQLite statement takes at most 500 rows, so each of these once failed with an internal error.
 * Every answer is read back from the tables (caches cleared, or the rows counted).
 */
import { expect } from 'chai';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { testDatabases } from '../support/databases.js';
import { serverSqlConfig, TestServer } from '../support/server.js';
import { login, stopAll, xml, xmppConfig, type Client, type Element } from '../support/xmpp.js';

const ADMIN = 'admin@localhost:adminpass';
const NS_ROSTER = 'jabber:iq:roster';
const NS_PRIVACY = 'jabber:iq:privacy';
const NS_BLOCKING = 'urn:xmpp:blocking';
const MODULES = { mod_admin_extra: {}, mod_roster: {}, mod_presence: {}, mod_privacy: {}, mod_blocking: {}, mod_shared_roster: {} };
const COUNT = 600;

/** `prefix000`, `prefix001`, … : sorted as numbered, so that orders compare as they are. */
function names(prefix: string, count = COUNT): string[] {
  return Array.from({ length: count }, (_, i) => `${prefix}${String(i).padStart(3, '0')}`);
}

for (const database of testDatabases()) {
  describe(`${COUNT} rows in one request on ${database.name}`, () => {
    let t: TestServer;
    const clients: Client[] = [];
    const connect = async (user: string) => {
      const c = await login(t, { user, password: `${user}-pw`, resource: 'r' });
      clients.push(c);
      return c;
    };
    const api = async (command: string, args: Record<string, unknown>) => {
      const res = await t.api(command, args, { basic: ADMIN });
      expect(res.status, `${command}: ${res.text.slice(0, 500)}`).to.equal(200);
      return res.body;
    };
    const rowCount = async (table: string, where: Record<string, unknown>) => {
      const row = (await t.server.services.storage.db('sql')(table).where(where).count({ n: '*' }).first()) as { n: number | string };
      return Number(row.n);
    };
    const groupsOf = async (owner: string, contact: string) => {
      const items = (await api('get_roster', { user: owner, host: 'localhost' })) as Array<{ jid: string; groups: string[] }>;
      return items.find((i) => i.jid === contact)?.groups;
    };
    const iq = (c: Client, type: 'get' | 'set', payload: Element) => c.iqCaller.request(xml('iq', { type }, payload));
    const privacyItems = async (c: Client, list: string) =>
      (await iq(c, 'get', xml('query', { xmlns: NS_PRIVACY }, xml('list', { name: list })))).getChild('query', NS_PRIVACY)!.getChild('list')!.getChildren('item');

    before(async () => {
      const settings = await database.settings('/tmp');
      const config = { ...xmppConfig(MODULES), ...serverSqlConfig(settings) };
      t = await TestServer.start(config);
      await t.bootstrapAdmin();
      for (const user of ['alice', 'bob', 'carol', 'dave']) await t.server.services.accounts.register(user, 'localhost', `${user}-pw`);
    });
    afterEach(async () => {
      await stopAll(...clients.splice(0));
    });
    after(async () => {
      await t?.stop();
      await database.cleanup();
    });

    describe('roster groups', () => {
      it(`add_rosteritem stores an item in ${COUNT} groups, and push_roster adds one more`, async () => {
        const groups = names('group ');
        expect(await api('add_rosteritem', { localuser: 'alice', localhost: 'localhost', user: 'bob', host: 'localhost', nick: 'Bob', groups, subs: 'none' })).to.equal(0);
        expect(await groupsOf('alice', 'bob@localhost')).to.deep.equal(groups);
        expect(await rowCount('roster_groups', { username: 'alice', jid: 'bob@localhost' })).to.equal(COUNT);

        // push_roster adds the entry's group to those the item has: all of them are written again.
        await writeFile(join(t.dir, 'data', 'one-more.txt'), '[{"bob", "localhost", "zzz", "Bob"}].\n');
        expect(await api('push_roster', { file: 'one-more.txt', user: 'alice', host: 'localhost' })).to.equal(0);
        expect(await groupsOf('alice', 'bob@localhost')).to.deep.equal([...groups, 'zzz']);
        expect(await rowCount('roster_groups', { username: 'alice', jid: 'bob@localhost' })).to.equal(COUNT + 1);
      });

      it(`a client's roster set stores an item in ${COUNT} groups`, async () => {
        const carol = await connect('carol');
        const groups = names('g');
        await iq(carol, 'set', xml('query', { xmlns: NS_ROSTER }, xml('item', { jid: 'dave@localhost' }, ...groups.map((g) => xml('group', {}, g)))));
        const result = await iq(carol, 'get', xml('query', { xmlns: NS_ROSTER }));
        const item = result.getChild('query', NS_ROSTER)!.getChildren('item').find((i) => i.attrs.jid === 'dave@localhost')!;
        expect(item.getChildren('group').map((g) => g.text()).sort()).to.deep.equal(groups);
        expect(await groupsOf('carol', 'dave@localhost')).to.deep.equal(groups);
      });
    });

    describe('shared roster displayed groups', () => {
      it(`srg_create stores a group displaying ${COUNT} groups`, async () => {
        const shown = names('shown');
        for (const group of shown) await api('srg_create', { group, host: 'localhost', label: '', description: '', display: [] });
        expect(await api('srg_create', { group: 'all', host: 'localhost', label: 'All', description: '', display: shown })).to.equal(0);
        expect(await rowCount('shared_roster_displayed', { host: 'localhost', name: 'all' })).to.equal(COUNT);
        // clear_cache reloads the groups from the tables.
        expect(await api('clear_cache', {})).to.equal(0);
        expect(await api('srg_get_displayed', { group: 'all', host: 'localhost' })).to.deep.equal(shown);
      });
    });

    describe('privacy list items', () => {
      const list = (name: string, jids: string[]) =>
        xml('list', { name }, ...jids.map((jid, i) => xml('item', { type: 'jid', value: jid, action: 'deny', order: String(i + 1) })));

      it(`privacy_set stores a list of ${COUNT} items`, async () => {
        const jids = names('spammer', COUNT).map((u) => `${u}@example.net`);
        expect(await api('privacy_set', { user: 'alice', host: 'localhost', xmlquery: xml('query', { xmlns: NS_PRIVACY }, list('spam', jids)).toString() })).to.equal(0);
        expect(await rowCount('privacy_list_items', { username: 'alice', list_name: 'spam' })).to.equal(COUNT);
        expect(await api('clear_cache', {})).to.equal(0);
        const alice = await connect('alice');
        expect((await privacyItems(alice, 'spam')).map((i) => i.attrs.value)).to.deep.equal(jids);
      });

      it(`a client's list set stores ${COUNT} items`, async () => {
        const bob = await connect('bob');
        const jids = names('pest', COUNT).map((u) => `${u}@example.net`);
        await iq(bob, 'set', xml('query', { xmlns: NS_PRIVACY }, list('pests', jids)));
        expect(await api('clear_cache', {})).to.equal(0);
        const items = await privacyItems(bob, 'pests');
        expect(items.map((i) => i.attrs.value)).to.deep.equal(jids);
        expect(items.map((i) => i.attrs.order)).to.deep.equal(jids.map((_, i) => String(i + 1)));
      });
    });

    describe('blocklist', () => {
      it(`a client's <block/> of ${COUNT} JIDs stores them all`, async () => {
        const dave = await connect('dave');
        const jids = names('troll', COUNT).map((u) => `${u}@example.net`);
        await iq(dave, 'set', xml('block', { xmlns: NS_BLOCKING }, ...jids.map((jid) => xml('item', { jid }))));
        expect(await rowCount('blocklist', { username: 'dave' })).to.equal(COUNT);
        expect(await api('clear_cache', {})).to.equal(0);
        const listed = await iq(dave, 'get', xml('blocklist', { xmlns: NS_BLOCKING }));
        expect(listed.getChild('blocklist', NS_BLOCKING)!.getChildren('item').map((i) => i.attrs.jid).sort()).to.deep.equal(jids);
      });
    });
  });
}
