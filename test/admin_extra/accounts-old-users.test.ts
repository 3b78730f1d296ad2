/**
 * delete_old_users and delete_old_users_vhost: accounts offline for longer than `days` (by mod_last's
 * record) and accounts that never logged in go, with their data; connected accounts, recently active ones
 * and those the access rules protect stay; the answer lists the deleted JIDs; progress reaches servicectl;
 * bad input changes nothing; the storage part runs on SQLite, MariaDB and PostgreSQL.
 *
 * Old last-activity records are written straight into mod_last's table: nobody can wait 40 days for a
 * logout. Recent ones come from real clients logging out.
 */
import { expect } from 'chai';
import { overControlSocket, servicectl } from '../support/cli.js';
import { testDatabases } from '../support/databases.js';
import { serverSqlConfig, TestServer, type RawConfig } from '../support/server.js';
import { login, stopAll, xml, xmppConfig, type Client } from '../support/xmpp.js';

const ADMIN = 'admin@localhost:adminpass';
const DAY_MS = 86_400_000;
const MODULES = { mod_admin_extra: {}, mod_last: {}, mod_private: {} };
const PROTECT_ADMINS = { protect_old_users: [{ allow: 'admin' }, { deny: 'all' }] };

function config(extra: RawConfig = {}, modules: Record<string, unknown> = MODULES): RawConfig {
  return { ...xmppConfig(modules), access_rules: PROTECT_ADMINS, ...extra };
}

/** A last logout `daysAgo` days ago, written where mod_last keeps it. */
async function loggedOut(t: TestServer, jid: string, daysAgo: number, status = ''): Promise<void> {
  const [user, host] = jid.split('@') as [string, string];
  await t.server.services.storage
    .db()('last_activity')
    .insert({ host, username: user, logout_at: Date.now() - daysAgo * DAY_MS, status })
    .onConflict(['host', 'username'])
    .merge();
}

/** Waits until mod_last has recorded the logout of a client that just stopped (it does as the session ends). */
async function recordedLogout(t: TestServer, jid: string): Promise<void> {
  const [user, host] = jid.split('@') as [string, string];
  const since = Date.now() - 60_000;
  const deadline = Date.now() + 10_000;
  while ((await t.server.services.storage.db()('last_activity').where({ host, username: user }).andWhere('logout_at', '>=', since)).length === 0) {
    if (Date.now() > deadline) throw new Error(`no logout of ${jid} was recorded`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

async function loginOutcome(t: TestServer, user: string, password: string, host = 'localhost'): Promise<string> {
  let client: Client | undefined;
  try {
    client = await login(t, { user, password, host });
    return 'logged in';
  } catch (err) {
    const condition = (err as { condition?: string }).condition;
    if (!condition) throw err;
    return condition;
  } finally {
    await stopAll(client);
  }
}

describe('delete_old_users, delete_old_users_vhost', () => {
  let t: TestServer;
  const api = (command: string, args: Record<string, unknown>) => t.api(command, args, { basic: ADMIN });
  const users = async (host: string) => (await api('registered_users', { host })).body as string[];
  const clients: Client[] = [];

  before(async () => {
    t = await TestServer.start(config());
    await t.bootstrapAdmin();
  });
  afterEach(() => stopAll(...clients.splice(0)));
  after(() => t.stop());

  it('deletes the accounts of a vhost inactive for longer than days or never used, with their data, and keeps the rest', async () => {
    const accounts = t.server.services.accounts;
    for (const user of ['never', 'old', 'recent', 'online', 'oldonline', 'justnow']) await accounts.register(user, 'localhost', `${user}-pw`);
    await accounts.register('faraway', 'example.com', 'faraway-pw');
    await loggedOut(t, 'recent@localhost', 10);
    await loggedOut(t, 'oldonline@localhost', 40);
    await loggedOut(t, 'faraway@example.com', 40);
    // Private data of the account that goes: it must go with it.
    const old = await login(t, { user: 'old', password: 'old-pw' });
    await old.iqCaller.request(xml('iq', { type: 'set' }, xml('query', { xmlns: 'jabber:iq:private' }, xml('notes', { xmlns: 'urn:example:notes' }, 'secret'))));
    await stopAll(old);
    await recordedLogout(t, 'old@localhost');
    await loggedOut(t, 'old@localhost', 40, 'on holiday');
    // A real logout a moment ago.
    const justnow = await login(t, { user: 'justnow', password: 'justnow-pw' });
    await stopAll(justnow);
    await recordedLogout(t, 'justnow@localhost');
    clients.push(await login(t, { user: 'online', password: 'online-pw' }), await login(t, { user: 'oldonline', password: 'oldonline-pw' }));

    const res = await api('delete_old_users_vhost', { host: 'localhost', days: 30 });
    expect(res.status, res.text).to.equal(200);
    expect(res.body).to.equal('Deleted 2 users: never@localhost, old@localhost');
    expect(await users('localhost')).to.deep.equal(['admin', 'justnow', 'oldonline', 'online', 'recent']);
    expect(await users('example.com')).to.deep.equal(['faraway']);
    expect(await loginOutcome(t, 'old', 'old-pw')).to.equal('not-authorized');
    // What mod_private and mod_last kept for the deleted account is gone too.
    const db = t.server.services.storage.db();
    expect(await db('private_storage').where({ host: 'localhost', username: 'old' })).to.deep.equal([]);
    expect(await db('last_activity').where({ host: 'localhost', username: 'old' })).to.deep.equal([]);
    // The connected ones never noticed.
    expect((await api('connected_users', {})).body).to.have.length(2);

    const everywhere = await api('delete_old_users', { days: 30 });
    expect(everywhere.body).to.equal('Deleted 1 users: faraway@example.com');
    expect(await users('example.com')).to.deep.equal([]);
    expect((await api('delete_old_users', { days: 30 })).body).to.equal('Deleted 0 users');
  });

  it('counts days back from now: 0 deletes every account offline now, unless a rule protects it', async () => {
    const accounts = t.server.services.accounts;
    for (const user of ['zed', 'yan']) await accounts.register(user, 'localhost', `${user}-pw`);
    await loggedOut(t, 'zed@localhost', 0.5);
    const oneDay = (await api('delete_old_users_vhost', { host: 'localhost', days: 1 })).body as string;
    expect(oneDay).to.include('yan@localhost').and.not.include('zed@localhost');
    // The clients of the previous test have logged out since: offline now, and gone with days 0.
    await recordedLogout(t, 'online@localhost');
    await recordedLogout(t, 'oldonline@localhost');
    const res = await api('delete_old_users', { days: 0 });
    expect(res.body).to.match(/^Deleted \d+ users: /).and.include('zed@localhost').and.include('online@localhost');
    expect(await users('localhost')).to.deep.equal(['admin']);
  });

  it('keeps what the delete_old_users rule denies, as the spec\'s vhost example does', async () => {
    await t.writeConfig(config({ access_rules: { delete_old_users: [{ deny: 'admin' }, { allow: 'all' }] } }));
    expect((await api('reload_config', {})).status).to.equal(200);
    try {
      await t.server.services.accounts.register('temp', 'localhost', 'temp-pw');
      expect((await api('delete_old_users_vhost', { host: 'localhost', days: 30 })).body).to.equal('Deleted 1 users: temp@localhost');
      expect(await users('localhost')).to.deep.equal(['admin']);
    } finally {
      await t.writeConfig(config());
      expect((await api('reload_config', {})).status).to.equal(200);
    }
  });

  it('reports progress to servicectl, and answers the same there', async () => {
    const accounts = t.server.services.accounts;
    for (let i = 0; i < 20; i++) await accounts.register(`bulk${i}`, 'localhost', 'pw');
    const { progress, final: frame } = await overControlSocket(t, 'delete_old_users_vhost', ['localhost', '30']);
    expect(frame).to.deep.include({ type: 'result', resultType: 'restuple' });
    expect((frame as { result: string }).result).to.match(/^Deleted 20 users: bulk0@localhost, bulk10@localhost, bulk11@localhost, .*, bulk19@localhost, bulk1@localhost, bulk2@localhost, /);
    // The last frame always arrives: all 21 accounts (admin included) examined.
    expect(progress.at(-1)).to.deep.equal({ done: 21, total: 21, label: 'accounts' });
    expect(progress.every((p, i) => i === 0 || p.done >= progress[i - 1]!.done)).to.equal(true);

    await accounts.register('cli', 'localhost', 'pw');
    const cli = await servicectl(t.configFile, 'delete_old_users', '30');
    expect(cli).to.deep.include({ code: 0, stdout: 'Deleted 1 users: cli@localhost\n' });
  });

  it('refuses bad input and deletes nothing', async () => {
    await t.server.services.accounts.register('keepme', 'localhost', 'pw');
    const negative = await api('delete_old_users', { days: -1 });
    expect(negative.status).to.equal(400);
    expect(negative.body.message).to.equal('days must be 0 or more, not -1');
    expect((await api('delete_old_users', { days: 'ten' })).status).to.equal(400);
    expect((await api('delete_old_users', {})).status).to.equal(400);
    const host = await api('delete_old_users_vhost', { host: 'nowhere.test', days: 30 });
    expect(host.status).to.equal(400);
    expect(host.body.message).to.match(/unknown virtual host 'nowhere.test'/);
    expect(await users('localhost')).to.include('keepme');
  });
});

describe('delete_old_users without mod_last', () => {
  let t: TestServer;
  before(async () => {
    t = await TestServer.start(config({}, { mod_admin_extra: {} }));
    await t.bootstrapAdmin();
    await t.server.services.accounts.register('never', 'localhost', 'pw');
  });
  after(() => t.stop());

  it('says it needs mod_last rather than take every account for never used', async () => {
    for (const [command, args] of [
      ['delete_old_users', { days: 30 }],
      ['delete_old_users_vhost', { host: 'localhost', days: 30 }],
    ] as const) {
      const res = await t.api(command, args, { basic: ADMIN });
      expect(res.status).to.equal(422);
      expect(res.body.message).to.equal(`${command} needs mod_last, which is not enabled: add it to modules`);
    }
    expect((await t.api('registered_users', { host: 'localhost' }, { basic: ADMIN })).body).to.deep.equal(['admin', 'never']);
  });
});

for (const database of testDatabases()) {
  describe(`delete_old_users on ${database.name}`, () => {
    let t: TestServer;
    before(async () => {
      const settings = await database.settings('/tmp');
      const raw = { ...config(), ...serverSqlConfig(settings) };
      t = await TestServer.start(raw);
      await t.bootstrapAdmin();
    });
    after(async () => {
      await t?.stop();
      await database.cleanup();
    });

    it('finds the old and never-used accounts among recent ones, in byte order', async () => {
      const accounts = t.server.services.accounts;
      for (const user of ['Zoë', 'adam', 'bea', 'éva', 'rémi']) await accounts.register(user, 'localhost', 'pw');
      await loggedOut(t, 'zoë@localhost', 31);
      await loggedOut(t, 'adam@localhost', 29);
      await loggedOut(t, 'éva@localhost', 365, 'away ✓');
      const res = await t.api('delete_old_users_vhost', { host: 'localhost', days: 30 }, { basic: ADMIN });
      expect(res.status, res.text).to.equal(200);
      expect(res.body).to.equal('Deleted 4 users: bea@localhost, rémi@localhost, zoë@localhost, éva@localhost');
      expect((await t.api('registered_users', { host: 'localhost' }, { basic: ADMIN })).body).to.deep.equal(['adam', 'admin']);
      expect(await t.server.services.storage.db()('last_activity').pluck('username')).to.deep.equal(['adam']);
    });
  });
}
