/**
 * The archive's commands on each database (mod_mam): get_mam_count, remove_mam_for_user,
 * remove_mam_for_user_with_peer, delete_old_mam_messages by type and age, and the background purge
 * delete_old_mam_messages_batch with its status and abort, in ejabberd's words, with rows aged through the
 * archive's store. A chat between two clients is archived for both on each database too, preferences are
 * stored and replaced, and an account's removal takes its archive and preferences. Bad arguments
 * are refused naming the argument, and change nothing.
 */
import { expect } from 'chai';
import { x } from '@service/plugin-api';
import { ArchiveStore } from '../../modules/mod_mam/src/store.js';
import { testDatabases } from '../support/databases.js';
import { serverSqlConfig, TestServer } from '../support/server.js';
import { login, next, stopAll, xml, xmppConfig } from '../support/xmpp.js';
import { NS_MAM, NS_SID, api, ok } from './helpers.js';

const DAY = 86_400_000;

for (const database of testDatabases()) {
  describe(`MAM commands on ${database.name} (mod_mam)`, function () {
    this.timeout(90_000);
    let t: TestServer;
    let store: ArchiveStore;

    /** Archives `count` messages for user@localhost with `peer`, `ageDays` old. */
    const archive = async (user: string, count: number, ageDays: number, peer = 'peer@localhost') => {
      const now = Date.now();
      for (let i = 0; i < count; i++) {
        const stanza = x('message', { xmlns: 'jabber:client', from: `${peer}/r`, to: `${user}@localhost`, type: 'chat' }, x('body', {}, `${ageDays} days old, ${i}`));
        await store.add({ user, host: 'localhost' }, { peer, peerFull: `${peer}/r`, direction: 'in', stanza, body: `${i}`, createdAt: now - ageDays * DAY - i });
      }
    };
    const count = async (user: string) => ok(t, 'get_mam_count', { user, host: 'localhost' }) as Promise<number>;
    const until = async (check: () => Promise<boolean>, what: string, ms = 20_000) => {
      const deadline = Date.now() + ms;
      while (!(await check())) {
        if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
        await new Promise((r) => setTimeout(r, 50));
      }
    };
    const status = () => ok(t, 'delete_old_mam_messages_status', { host: 'localhost' });

    before(async () => {
      const settings = await database.settings('/tmp');
      t = await TestServer.start({ ...xmppConfig({ mod_mam: {}, mod_admin_extra: {} }), ...serverSqlConfig(settings) });
      await t.bootstrapAdmin();
      for (const user of ['alice', 'bob', 'old', 'batch', 'peers']) await t.server.services.accounts.register(user, 'localhost', `${user}-pw`);
      store = new ArchiveStore(t.server.services.storage.db());
    });
    after(async () => {
      await t?.stop();
      await database.cleanup();
    });

    it('archives a chat between two clients for both of them', async () => {
      const alice = await login(t, { user: 'alice', password: 'alice-pw', resource: 'a' });
      const bob = await login(t, { user: 'bob', password: 'bob-pw', resource: 'b' });
      try {
        await bob.send(xml('presence'));
        const arrived = next(bob, (s) => s.is('message') && s.getChildText('body') === 'hi');
        await alice.send(xml('message', { to: 'bob@localhost', type: 'chat' }, xml('body', {}, 'hi')));
        expect((await arrived).getChild('stanza-id', NS_SID)?.attrs.by).to.equal('bob@localhost');
        expect(await count('alice')).to.equal(1);
        expect(await count('bob')).to.equal(1);
      } finally {
        await stopAll(alice, bob);
      }
    });

    it('stores and replaces preferences, and removing the account removes its archive and preferences', async () => {
      await t.server.services.accounts.register('leaving', 'localhost', 'leaving-pw');
      const leaving = await login(t, { user: 'leaving', password: 'leaving-pw', resource: 'r' });
      try {
        const setPrefs = (mode: string, always: string[]) =>
          leaving.iqCaller.request(xml('iq', { type: 'set' }, xml('prefs', { xmlns: NS_MAM, default: mode }, xml('always', {}, ...always.map((j) => xml('jid', {}, j))), xml('never'))));
        await setPrefs('never', ['alice@localhost']);
        // A second set replaces the first (an upsert on each database).
        await setPrefs('roster', ['bob@localhost', 'alice@localhost']);
        const read = (await leaving.iqCaller.request(xml('iq', { type: 'get' }, xml('prefs', { xmlns: NS_MAM })))).getChild('prefs', NS_MAM)!;
        expect(read.attrs.default).to.equal('roster');
        expect(read.getChild('always')!.getChildren('jid').map((j) => j.text())).to.deep.equal(['bob@localhost', 'alice@localhost']);
      } finally {
        await stopAll(leaving);
      }
      await archive('leaving', 3, 0);
      expect(await count('leaving')).to.equal(3);
      await ok(t, 'unregister', { user: 'leaving', host: 'localhost' });
      const db = t.server.services.storage.db();
      expect(Number((await db('mam_messages').where({ username: 'leaving' }).count({ n: '*' }))[0]!.n)).to.equal(0);
      expect(await db('mam_prefs').where({ username: 'leaving' })).to.have.length(0);
    });

    it('get_mam_count counts, remove_mam_for_user_with_peer and remove_mam_for_user remove', async () => {
      await archive('peers', 4, 0, 'one@localhost');
      await archive('peers', 3, 0, 'two@example.com');
      expect(await count('peers')).to.equal(7);
      expect(await ok(t, 'remove_mam_for_user_with_peer', { user: 'peers', host: 'localhost', with: 'two@example.com/any' })).to.equal('MAM archive removed');
      expect(await count('peers')).to.equal(4);
      expect(await ok(t, 'remove_mam_for_user', { user: 'peers', host: 'localhost' })).to.equal('MAM archive removed');
      expect(await count('peers')).to.equal(0);
      expect(await count('alice'), "others' archives stay").to.equal(1);
    });

    it('delete_old_mam_messages deletes by type and age; type groupchat leaves one-to-one rows alone; 0 days deletes everything', async () => {
      await archive('old', 30, 40);
      await archive('old', 5, 2);
      expect(await ok(t, 'delete_old_mam_messages', { type: 'groupchat', days: 30 })).to.equal(0);
      expect(await count('old')).to.equal(35);
      expect(await ok(t, 'delete_old_mam_messages', { type: 'chat', days: 30 })).to.equal(0);
      expect(await count('old')).to.equal(5);
      await archive('old', 2, 40);
      expect(await ok(t, 'delete_old_mam_messages', { type: 'all', days: 30 })).to.equal(0);
      expect(await count('old')).to.equal(5);
      expect(await ok(t, 'delete_old_mam_messages', { type: 'all', days: 0 })).to.equal(0);
      expect(await count('old')).to.equal(0);
    });

    it('delete_old_mam_messages_batch purges in the background at its pace, says how far it got, and is refused while it runs', async () => {
      expect(await status()).to.equal('Operation not started');
      await archive('batch', 250, 40);
      await archive('batch', 7, 1);
      const started = Date.now();
      const args = { host: 'localhost', type: 'all', days: 30, batch_size: 100, rate: 6000 };
      expect(await ok(t, 'delete_old_mam_messages_batch', args)).to.equal('Removal of MAM messages older than 30 days started on localhost');
      const again = await api(t, 'delete_old_mam_messages_batch', args);
      expect(again.status).to.equal(409);
      expect(again.body.message).to.match(/^Operation in progress/);
      await until(async () => /^Operation in progress, deleted 100 messages$/.test(await status()), 'the first batch');
      await until(async () => (await status()) === 'Operation was completed after deleting 250 messages', 'the end of the purge');
      expect(Date.now() - started, 'paced at 6 000 messages a minute').to.be.greaterThan(1900);
      expect(await count('batch')).to.equal(7);
    });

    it('abort_delete_old_mam_messages stops the purge between two batches', async () => {
      await archive('batch', 300, 40);
      await ok(t, 'delete_old_mam_messages_batch', { host: 'localhost', type: 'chat', days: 30, batch_size: 100, rate: 600 });
      await until(async () => (await status()) === 'Operation in progress, deleted 100 messages', 'the first batch');
      expect(await ok(t, 'abort_delete_old_mam_messages', { host: 'localhost' })).to.equal('Operation aborted');
      expect(await status()).to.equal('Operation was aborted after deleting 100 messages');
      expect(await ok(t, 'abort_delete_old_mam_messages', { host: 'localhost' })).to.equal('No task running');
      await new Promise((r) => setTimeout(r, 300));
      expect(await count('batch')).to.equal(207);
      // groupchat selects nothing: the purge completes at once, deleting none.
      await ok(t, 'delete_old_mam_messages_batch', { host: 'localhost', type: 'groupchat', days: 30, batch_size: 1000, rate: 100000 });
      await until(async () => (await status()) === 'Operation was completed after deleting 0 messages', 'the groupchat purge');
      expect(await count('batch')).to.equal(207);
    });

    it('refuses bad arguments naming them, and changes nothing', async () => {
      await archive('old', 3, 40);
      const cases: Array<[string, Record<string, unknown>, string]> = [
        ['delete_old_mam_messages', { type: 'everything', days: 30 }, 'type'],
        ['delete_old_mam_messages', { type: 'all', days: -1 }, 'days'],
        ['delete_old_mam_messages_batch', { host: 'localhost', type: 'bogus', days: 30, batch_size: 10, rate: 10 }, 'type'],
        ['delete_old_mam_messages_batch', { host: 'localhost', type: 'all', days: -2, batch_size: 10, rate: 10 }, 'days'],
        ['delete_old_mam_messages_batch', { host: 'localhost', type: 'all', days: 30, batch_size: 0, rate: 10 }, 'batch_size'],
        ['delete_old_mam_messages_batch', { host: 'localhost', type: 'all', days: 30, batch_size: 10, rate: -5 }, 'rate'],
        ['delete_old_mam_messages_batch', { host: 'nowhere.example', type: 'all', days: 30, batch_size: 10, rate: 10 }, 'host'],
        ['delete_old_mam_messages_status', { host: 'nowhere.example' }, 'host'],
        ['get_mam_count', { user: 'old', host: 'nowhere.example' }, 'host'],
        ['remove_mam_for_user_with_peer', { user: 'old', host: 'localhost', with: 'a@b@c' }, 'with'],
      ];
      for (const [command, args, argument] of cases) {
        const res = await api(t, command, args);
        expect(res.status, `${command} ${JSON.stringify(args)}`).to.equal(400);
        expect(res.body.message, command).to.contain(argument);
      }
      expect(await count('old')).to.equal(3);
    });
  });
}
