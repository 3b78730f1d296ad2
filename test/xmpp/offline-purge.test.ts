/**
 * The purges of offline storage on each database, with messages aged by hand: delete_old_messages keeps
 * what is younger than `days` (0 deletes everything), delete_expired_messages removes what expired, and
 * delete_old_messages_batch runs in the background at the given pace, says how far it got in ejabberd's
 * words, refuses a second start, and stops between two batches when aborted. Bad arguments are refused
 * naming the argument, and change nothing.
 */
import { expect } from 'chai';
import { testDatabases } from '../support/databases.js';
import { serverSqlConfig, TestServer } from '../support/server.js';
import { xmppConfig } from '../support/xmpp.js';

const ADMIN = 'admin@localhost:adminpass';
const DAY = 86_400_000;

for (const database of testDatabases()) {
  describe(`offline purges on ${database.name} (mod_offline)`, function () {
    this.timeout(60_000);
    let t: TestServer;

    const call = async (command: string, args: Record<string, unknown>) => {
      const res = await t.api(command, args, { basic: ADMIN });
      return { status: res.status, body: JSON.parse(res.text) as any };
    };
    const ok = async (command: string, args: Record<string, unknown>) => {
      const res = await call(command, args);
      expect(res.status, `${command}: ${JSON.stringify(res.body)}`).to.equal(200);
      return res.body;
    };
    const db = () => t.server.services.storage.db();
    /** Stores `count` messages for user@localhost, `ageDays` old, expiring at `expiresAt` when given. */
    const store = async (user: string, count: number, ageDays: number, expiresAt: number | null = null) => {
      const now = Date.now();
      const rows = Array.from({ length: count }, (_, i) => ({
        host: 'localhost',
        username: user,
        from_jid: 'sender@localhost/desk',
        created_at: now - ageDays * DAY - i,
        expires_at: expiresAt,
        xml: `<message xmlns='jabber:client' from='sender@localhost/desk' to='${user}@localhost' type='chat'><body>${ageDays} days old, ${i}</body></message>`,
      }));
      for (let i = 0; i < rows.length; i += 100) await db()('offline_messages').insert(rows.slice(i, i + 100));
    };
    const count = async (user: string) => ok('get_offline_count', { user, host: 'localhost' }) as Promise<number>;
    const until = async (check: () => Promise<boolean>, what: string, ms = 20_000) => {
      const deadline = Date.now() + ms;
      while (!(await check())) {
        if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
        await new Promise((r) => setTimeout(r, 50));
      }
    };

    before(async () => {
      const settings = await database.settings('/tmp');
      t = await TestServer.start({ ...xmppConfig({ mod_offline: {}, mod_admin_extra: {} }), ...serverSqlConfig(settings) });
      await t.bootstrapAdmin();
      for (const user of ['old', 'batch', 'expiring']) await t.server.services.accounts.register(user, 'localhost', `${user}-pw`);
    });
    after(async () => {
      await t?.stop();
      await database.cleanup();
    });

    it('delete_old_messages deletes what is older than `days` and keeps the rest; 0 deletes everything', async () => {
      await store('old', 30, 40);
      await store('old', 5, 2);
      expect(await count('old')).to.equal(35);
      expect(await ok('delete_old_messages', { days: 30 })).to.equal(0);
      expect(await count('old')).to.equal(5);
      expect(await ok('delete_old_messages', { days: 0 })).to.equal(0);
      expect(await count('old')).to.equal(0);
    });

    it('delete_expired_messages deletes what expired and keeps what has not', async () => {
      await store('expiring', 4, 1, Date.now() - 1000);
      await store('expiring', 3, 1, Date.now() + DAY);
      expect((await db()('offline_messages').where({ username: 'expiring' }).count({ n: '*' }))[0]!.n).to.satisfy((n: unknown) => Number(n) === 7);
      expect(await ok('delete_expired_messages', {})).to.equal(0);
      expect(await count('expiring')).to.equal(3);
      expect(Number((await db()('offline_messages').where({ username: 'expiring' }).count({ n: '*' }))[0]!.n)).to.equal(3);
    });

    it('delete_old_messages_batch purges in the background at its pace, says how far it got, and is refused while it runs', async () => {
      expect(await ok('delete_old_messages_status', { host: 'localhost' })).to.equal('Operation not started');
      await store('batch', 250, 40);
      await store('batch', 7, 1);
      // 100 per batch, 6 000 per minute: the second batch waits a second for the first, the third one more.
      const started = Date.now();
      expect(await ok('delete_old_messages_batch', { host: 'localhost', days: 30, batch_size: 100, rate: 6000 })).to.equal('Removal of offline messages older than 30 days started on localhost');
      const again = await call('delete_old_messages_batch', { host: 'localhost', days: 30, batch_size: 100, rate: 6000 });
      expect(again.status).to.equal(409);
      expect(again.body.message).to.match(/^Operation in progress/);
      await until(async () => /^Operation in progress, deleted 100 messages$/.test(await ok('delete_old_messages_status', { host: 'localhost' })), 'the first batch');
      await until(async () => (await ok('delete_old_messages_status', { host: 'localhost' })) === 'Operation was completed after deleting 250 messages', 'the end of the purge');
      expect(Date.now() - started, 'paced at 6 000 messages a minute').to.be.greaterThan(1900);
      expect(await count('batch')).to.equal(7);
    });

    it('abort_delete_old_messages stops the purge between two batches, and the status says so', async () => {
      await store('batch', 300, 40);
      // 100 per batch, 600 per minute: ten seconds between batches, so the abort comes after the first.
      await ok('delete_old_messages_batch', { host: 'localhost', days: 30, batch_size: 100, rate: 600 });
      await until(async () => (await ok('delete_old_messages_status', { host: 'localhost' })) === 'Operation in progress, deleted 100 messages', 'the first batch');
      expect(await ok('abort_delete_old_messages', { host: 'localhost' })).to.equal('Operation aborted');
      expect(await ok('delete_old_messages_status', { host: 'localhost' })).to.equal('Operation was aborted after deleting 100 messages');
      expect(await ok('abort_delete_old_messages', { host: 'localhost' })).to.equal('No task running');
      await new Promise((r) => setTimeout(r, 300));
      expect(await count('batch')).to.equal(207);
      // A new purge may start once the aborted one stopped.
      expect(await ok('delete_old_messages_batch', { host: 'localhost', days: 30, batch_size: 1000, rate: 100000 })).to.match(/started on localhost$/);
      await until(async () => (await ok('delete_old_messages_status', { host: 'localhost' })) === 'Operation was completed after deleting 200 messages', 'the second purge');
      expect(await count('batch')).to.equal(7);
    });

    it('refuses bad arguments naming them, and changes nothing', async () => {
      await store('old', 3, 40);
      const cases: Array<[string, Record<string, unknown>, string]> = [
        ['delete_old_messages', { days: -1 }, 'days'],
        ['delete_old_messages_batch', { host: 'localhost', days: 30, batch_size: 0, rate: 10 }, 'batch_size'],
        ['delete_old_messages_batch', { host: 'localhost', days: 30, batch_size: 10, rate: -5 }, 'rate'],
        ['delete_old_messages_batch', { host: 'nowhere.example', days: 30, batch_size: 10, rate: 10 }, 'host'],
        ['delete_old_messages_status', { host: 'nowhere.example' }, 'host'],
      ];
      for (const [command, args, argument] of cases) {
        const res = await call(command, args);
        expect(res.status, `${command} ${JSON.stringify(args)}`).to.equal(400);
        expect(res.body.message, command).to.contain(argument);
      }
      expect(await count('old')).to.equal(3);
      expect(await ok('delete_old_messages_status', { host: 'localhost' })).to.equal('Operation was completed after deleting 200 messages');
    });
  });
}
