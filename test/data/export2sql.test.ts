/**
 * export2sql (issue 19): a server on the default SQLite storage (vCards in the embedded store) filled through
 * real clients and commands — accounts stored as SCRAM keys and as plain passwords, a subscription both ways
 * with a nickname and a group, a vCard, an offline message — exports localhost while clients stay connected,
 * through servicectl's control socket with its progress. Each file is loaded with the real command-line
 * clients into a scratch MariaDB and a scratch PostgreSQL database, and a server started on each serves the
 * same accounts with the same passwords, rosters, vCard, PEP item, MUC room and offline message, finds its schema current (no
 * migration runs) and keeps writing (new rows get fresh ids). Bad input gets a clear error and no file.
 */
import { spawn } from 'node:child_process';
import { mkdir, open, readdir, readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { expect } from 'chai';
import { api } from '../support/admin-api.js';
import { overControlSocket, servicectl } from '../support/cli.js';
import { testDatabase } from '../support/databases.js';
import { serverSqlConfig, TestServer } from '../support/server.js';
import { login, next, stopAll, subscribe, xml, xmppConfig, type Client, type Element } from '../support/xmpp.js';
import type { SqlSettings } from '../../kernel/src/storage/database.js';

const COMMON_MODULES = { mod_roster: {}, mod_presence: {}, mod_offline: {}, mod_muc: {}, mod_muc_admin: {}, mod_pubsub: {} };
const SOURCE_MODULES = { ...COMMON_MODULES, mod_vcard: { db_type: 'mnesia' } };
const TARGET_MODULES = { ...COMMON_MODULES, mod_vcard: {} };
const NS_PUBSUB = 'http://jabber.org/protocol/pubsub';
const NS_NICK = 'http://jabber.org/protocol/nick';
const USERS = { alice: 'alice-pw', bob: 'bob-pw', 'émile': 'émile-pw' } as const;
/** Registered while passwords were stored in plain text. */
const PLAIN_USER = { user: 'pat', password: 'pat-pw' };
const OFFLINE_BODY = 'while you were out';

/** Loads a SQL file with the database's own command-line client, stopping at the first error. */
async function loadWithCli(settings: SqlSettings, file: string): Promise<void> {
  const [command, args] =
    settings.type === 'mysql'
      ? ['mysql', ['-h', settings.server, '-P', String(settings.port), '-u', settings.username, settings.database]]
      : ['psql', ['-h', settings.server, '-p', String(settings.port), '-U', settings.username, '-d', settings.database, '-v', 'ON_ERROR_STOP=1', '-q', '-f', file]];
  const input = settings.type === 'mysql' ? await open(file, 'r') : undefined;
  try {
    await new Promise<void>((resolve, reject) => {
      const child = spawn(command, args, { stdio: [input ? input.fd : 'ignore', 'pipe', 'pipe'] });
      let output = '';
      child.stdout!.on('data', (d) => (output += d));
      child.stderr!.on('data', (d) => (output += d));
      child.on('error', reject);
      child.on('close', (code) => (code === 0 ? resolve() : reject(new Error(`${command} exited with ${code}: ${output}`))));
    });
  } finally {
    await input?.close();
  }
}

async function rosterOf(client: Client): Promise<Element[]> {
  const answer = await client.iqCaller.request(xml('iq', { type: 'get' }, xml('query', { xmlns: 'jabber:iq:roster' })));
  return answer.getChild('query')!.getChildren('item');
}

async function vcardFn(client: Client): Promise<string | undefined> {
  const answer = await client.iqCaller.request(xml('iq', { type: 'get' }, xml('vCard', { xmlns: 'vcard-temp' })));
  return answer.getChild('vCard', 'vcard-temp')?.getChildText('FN') ?? undefined;
}

describe('export2sql', function () {
  this.timeout(120_000);
  let t: TestServer;
  let alice: Client | undefined;
  let pat: Client | undefined;
  const dataDir = () => join(t.dir, 'data');
  const db = () => t.server.services.storage.db('sql');

  before(async () => {
    t = await TestServer.start({ ...xmppConfig(SOURCE_MODULES), auth_password_format: 'plain' });
    await t.bootstrapAdmin();
    await t.register(PLAIN_USER.user, 'localhost', PLAIN_USER.password);
    await t.writeConfig(xmppConfig(SOURCE_MODULES));
    expect((await api(t, 'reload_config', {})).body).to.equal(0);
    for (const [user, password] of Object.entries(USERS)) await t.register(user, 'localhost', password);
    await t.register('carol', 'example.com', 'carol-pw');
    const stored = await db()('users').select('username', 'password', 'scram_sha256_stored').where({ host: 'localhost' });
    const row = (u: string) => stored.find((r) => r.username === u)!;
    expect(row('pat').password, 'pat is stored with a plain password').to.equal(PLAIN_USER.password);
    expect(row('alice').password, 'alice is stored as SCRAM keys').to.equal(null);
    expect(row('alice').scram_sha256_stored).to.be.a('string');

    alice = await login(t, { user: 'alice', password: USERS.alice, resource: 'a', mechanism: 'SCRAM-SHA-256' });
    let bob: Client | undefined = await login(t, { user: 'bob', password: USERS.bob, resource: 'b' });
    await Promise.all([alice.send(xml('presence')), bob.send(xml('presence'))]);
    await subscribe(bob, 'bob@localhost', alice, 'alice@localhost');
    await subscribe(alice, 'alice@localhost', bob, 'bob@localhost');
    await alice.iqCaller.request(
      xml('iq', { type: 'set' }, xml('query', { xmlns: 'jabber:iq:roster' }, xml('item', { jid: 'bob@localhost', name: 'Bobby' }, xml('group', {}, 'Friends')))),
    );
    await alice.iqCaller.request(xml('iq', { type: 'set' }, xml('vCard', { xmlns: 'vcard-temp' }, xml('FN', {}, 'Alice Liddell'))));
    await bob.stop();
    bob = undefined;
    await alice.send(xml('message', { to: 'bob@localhost', type: 'chat' }, xml('body', {}, OFFLINE_BODY)));
    for (let i = 0; i < 50; i++) {
      if ((await db()('offline_messages').where({ username: 'bob' })).length) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(await db()('offline_messages').where({ username: 'bob' })).to.have.length(1);
    // A room of each host's MUC service, and a PEP item of alice's (pubsub rows hang off their node).
    const persistent = [{ name: 'persistent', value: 'true' }];
    expect((await api(t, 'create_room_with_opts', { room: 'lobby', service: 'conference.localhost', host: 'localhost', options: persistent })).body).to.equal(0);
    expect((await api(t, 'create_room_with_opts', { room: 'faraway', service: 'conference.example.com', host: 'example.com', options: persistent })).body).to.equal(0);
    await alice.iqCaller.request(
      xml('iq', { type: 'set' }, xml('pubsub', { xmlns: NS_PUBSUB }, xml('publish', { node: NS_NICK }, xml('item', { id: 'current' }, xml('nick', { xmlns: NS_NICK }, 'Ali'))))),
    );
    pat = await login(t, { ...PLAIN_USER, resource: 'p', mechanism: 'PLAIN' });
    await pat.send(xml('presence'));
  });

  after(async () => {
    await stopAll(alice, pat);
    await t?.stop();
  });

  describe('bad input', () => {
    let before: string[];
    const partials = async () => (await readdir(dataDir())).filter((f) => !before.includes(f));
    beforeEach(async () => {
      before = await readdir(dataDir());
    });

    it('refuses a host the server does not serve, naming it, and writes nothing', async () => {
      const res = await api(t, 'export2sql', { host: 'nowhere.example', file: 'x.pgsql' });
      expect(res.status, JSON.stringify(res.body)).to.equal(400);
      expect(res.body.message).to.contain('nowhere.example');
      expect(await partials()).to.deep.equal([]);
    });

    it('refuses a file name that does not say which database, on SQLite', async () => {
      const res = await api(t, 'export2sql', { host: 'localhost', file: 'dump.sql' });
      expect(res.status, JSON.stringify(res.body)).to.equal(400);
      expect(res.body.message).to.contain('file').and.to.contain('.pgsql').and.to.contain('.mysql');
      expect(await partials()).to.deep.equal([]);
    });

    it('says why it cannot write, and leaves nothing behind', async () => {
      const res = await api(t, 'export2sql', { host: 'localhost', file: 'no/such/dir/dump.pgsql' });
      expect(res.status, JSON.stringify(res.body)).to.equal(422);
      expect(res.body.message).to.contain('the directory does not exist');
      expect(await partials()).to.deep.equal([]);
    });

    it('fails on a target it cannot replace (a directory), after writing: no partial file, the directory untouched', async () => {
      await mkdir(join(dataDir(), 'taken.pgsql'));
      await writeFile(join(dataDir(), 'taken.pgsql', 'keep'), 'keep');
      before = await readdir(dataDir());
      const res = await api(t, 'export2sql', { host: 'localhost', file: 'taken.pgsql' });
      expect(res.status, JSON.stringify(res.body)).to.equal(422);
      expect(res.body.message).to.match(/cannot write .*taken\.pgsql: EISDIR/);
      expect(await partials()).to.deep.equal([]);
      expect(await readdir(join(dataDir(), 'taken.pgsql'))).to.deep.equal(['keep']);
    });

    it('refuses an empty file name', async () => {
      const res = await api(t, 'export2sql', { host: 'localhost', file: '' });
      expect(res.status, JSON.stringify(res.body)).to.equal(400);
      expect(res.body.message).to.contain('file');
    });
  });

  it('runs from the servicectl command line, and refuses bad input there with the reason', async () => {
    const done = await servicectl(t.configFile, '--json', 'export2sql', 'localhost', 'cli.pgsql');
    expect(done.code, done.stdout + done.stderr).to.equal(0);
    expect(done.stdout.trim()).to.equal('0');
    expect((await stat(join(dataDir(), 'cli.pgsql'))).mode & 0o777).to.equal(0o600);
    const refused = await servicectl(t.configFile, 'export2sql', 'localhost', 'cli.sql');
    expect(refused.code).to.not.equal(0);
    expect(refused.stderr).to.contain('.pgsql');
  });

  const files: Record<'mysql' | 'pgsql', string> = { mysql: 'localhost.mysql', pgsql: 'localhost.pgsql' };

  for (const [dialect, name] of Object.entries(files) as Array<['mysql' | 'pgsql', string]>) {
    it(`writes ${name} (0600, under data_dir) with progress, while clients stay connected`, async () => {
      const delivered = next(pat!, (s) => s.is('message') && s.getChildText('body') === `during ${dialect}`);
      const exporting = overControlSocket(t, 'export2sql', ['localhost', name]);
      await alice!.send(xml('message', { to: 'pat@localhost/p', type: 'chat' }, xml('body', {}, `during ${dialect}`)));
      const { progress, final } = await exporting;
      await delivered;
      expect(final.type, JSON.stringify(final)).to.equal('result');
      expect(progress.length, 'export2sql reported no progress').to.be.at.least(1);
      const last = progress.at(-1)!;
      expect(last.total).to.be.a('number').and.to.be.at.least(5);
      expect(last.done).to.equal(last.total);
      expect(progress.every((p, i) => i === 0 || p.done >= progress[i - 1]!.done)).to.equal(true);

      const file = join(dataDir(), name);
      expect((await stat(file)).mode & 0o777).to.equal(0o600);
      const text = await readFile(file, 'utf8');
      expect(text).to.not.contain('carol');
      expect(text).to.not.contain('faraway');
      expect(text).to.contain('lobby');
      expect(text).to.contain('Alice Liddell');
      expect(text).to.contain(OFFLINE_BODY);
      expect(text).to.match(dialect === 'pgsql' ? /insert into "users"/ : /insert into `users`/);
      // PostgreSQL's serial columns are told about the ids loaded (offline_messages.id).
      if (dialect === 'pgsql') expect(text).to.contain(`setval(pg_get_serial_sequence('offline_messages', 'id')`);
      expect(t.logged((l) => /^export2sql wrote \d+ rows of localhost/.test(String(l.msg)) && l.file === file)).to.have.length(1);
    });
  }

  it('keeps serving clients during a long export (reads in pages, progress growing)', async () => {
    // Offline messages of a user without an account: many rows, written straight into the table.
    const ROWS = 60_000;
    const now = Date.now();
    for (let start = 0; start < ROWS; start += 10_000) {
      const chunk = Array.from({ length: 10_000 }, (_, i) => ({
        host: 'localhost',
        username: 'bulk',
        from_jid: 'sender@localhost/r',
        created_at: now,
        expires_at: null,
        xml: `<message xmlns="jabber:client" to="bulk@localhost" type="chat"><body>bulk ${start + i} ${'x'.repeat(200)}</body></message>`,
      }));
      await db().batchInsert('offline_messages', chunk, 500);
    }
    try {
      let finished = 0;
      const exporting = overControlSocket(t, 'export2sql', ['localhost', 'big.pgsql']).then((r) => ((finished = Date.now()), r));
      // While it runs: messages between two connected clients go through.
      let delivered = 0;
      for (let i = 0; i < 3; i++) {
        const got = next(pat!, (s) => s.is('message') && s.getChildText('body') === `meanwhile ${i}`);
        await alice!.send(xml('message', { to: 'pat@localhost/p', type: 'chat' }, xml('body', {}, `meanwhile ${i}`)));
        await got;
        delivered = Date.now();
      }
      const { progress, final } = await exporting;
      expect(final.type, JSON.stringify(final)).to.equal('result');
      expect(delivered, 'the messages were delivered only after the export ended').to.be.below(finished);
      expect(new Set(progress.map((p) => p.done)).size, JSON.stringify(progress)).to.be.at.least(3);
      expect(progress.at(-1)!.done).to.be.at.least(ROWS);
      const text = await readFile(join(dataDir(), 'big.pgsql'), 'utf8');
      expect(text.match(/bulk \d+ /g)).to.have.length(ROWS);
    } finally {
      await db()('offline_messages').where({ username: 'bulk' }).delete();
    }
  });

  for (const dialect of ['mysql', 'pgsql'] as const) {
    describe(`loaded into ${dialect === 'mysql' ? 'MariaDB' : 'PostgreSQL'}`, () => {
      const database = testDatabase(dialect);
      let target: TestServer | undefined;
      let clients: Client[] = [];

      before(async () => {
        const settings = await database.settings('/tmp');
        await loadWithCli(settings, join(dataDir(), files[dialect]));
        target = await TestServer.start({ ...xmppConfig(TARGET_MODULES), ...serverSqlConfig(settings) });
      });
      after(async () => {
        await stopAll(...clients);
        await target?.stop();
        await database.cleanup();
      });

      it('finds its schema current: no migration runs at start', () => {
        expect(target!.logged((l) => l.msg === 'database migrations applied')).to.deep.equal([]);
      });

      it('has the same accounts of localhost and none of the other host', async () => {
        expect((await api(target!, 'registered_users', { host: 'localhost' })).body).to.deep.equal(['admin', 'alice', 'bob', 'pat', 'émile']);
        expect((await api(target!, 'registered_users', { host: 'example.com' })).body).to.deep.equal([]);
      });

      it('logs in with the same passwords: SCRAM keys and plain', async () => {
        const a = await login(target!, { user: 'alice', password: USERS.alice, mechanism: 'SCRAM-SHA-512' });
        const p = await login(target!, { ...PLAIN_USER, mechanism: 'PLAIN' });
        clients.push(a, p);
        // xmpp.js cannot send a non-ASCII user name in SASL: the account service checks émile's password.
        expect(await target!.server.services.accounts.checkPassword('émile', 'localhost', USERS['émile'])).to.equal(true);
        expect(await target!.server.services.accounts.checkPassword('émile', 'localhost', 'nope')).to.equal(false);
        const wrong = await login(target!, { user: 'alice', password: 'nope' }).catch((err: Error) => err);
        expect(wrong).to.be.instanceOf(Error);
      });

      it("serves alice's roster (subscription, nickname, group), vCard and PEP nick", async () => {
        const a = clients[0]!;
        const items = await rosterOf(a);
        const bob = items.find((i) => i.attrs.jid === 'bob@localhost');
        expect(bob?.attrs.subscription).to.equal('both');
        expect(bob?.attrs.name).to.equal('Bobby');
        expect(bob?.getChildren('group').map((g) => g.text())).to.deep.equal(['Friends']);
        expect(await vcardFn(a)).to.equal('Alice Liddell');
        const pep = await a.iqCaller.request(xml('iq', { type: 'get', to: 'alice@localhost' }, xml('pubsub', { xmlns: NS_PUBSUB }, xml('items', { node: NS_NICK }))));
        expect(pep.getChild('pubsub')?.getChild('items')?.getChild('item')?.getChildText('nick', NS_NICK)).to.equal('Ali');
      });

      it("serves localhost's MUC room and not the other host's", async () => {
        expect((await api(target!, 'muc_online_rooms', { service: 'global' })).body).to.deep.equal(['lobby@conference.localhost']);
      });

      it("delivers bob's offline message, and stores new ones (fresh ids)", async () => {
        const bob = await login(target!, { user: 'bob', password: USERS.bob, resource: 'b' });
        clients.push(bob);
        const flushed = next(bob, (s) => s.is('message') && s.getChildText('body') === OFFLINE_BODY);
        await bob.send(xml('presence'));
        await flushed;
        const items = await rosterOf(bob);
        expect(items.find((i) => i.attrs.jid === 'alice@localhost')?.attrs.subscription).to.equal('both');
        await bob.stop();
        clients = clients.filter((c) => c !== bob);
        const a = clients[0]!;
        for (let i = 0; i < 3; i++) await a.send(xml('message', { to: 'bob@localhost', type: 'chat' }, xml('body', {}, `later ${i}`)));
        const sql = target!.server.services.storage.db('sql');
        for (let i = 0; i < 50 && (await sql('offline_messages').where({ username: 'bob' })).length < 3; i++) await new Promise((r) => setTimeout(r, 100));
        expect((await sql('offline_messages').where({ username: 'bob' })).map((r) => r.xml).join()).to.contain('later 2');
        await target!.register('newcomer', 'localhost', 'new-pw');
      });
    });
  }
});
