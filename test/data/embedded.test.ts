/**
 * The embedded database's commands (issue 19, ejabberd's "mnesia" family) on a running server on the default
 * SQLite storage, with vCards in the embedded store (db_type: mnesia), clients connected and accounts being
 * registered over the HTTP API while the commands run: backup (an online, consistent image: everything
 * registered before it began is in it), restore (under load: everything the backup holds comes back field by
 * field, the only other rows are the load's; a session whose account the backup has goes on, one whose account
 * it lacks ends with a stream error), install_fallback (restored at the restart), dump / load / dump_table
 * (round trips compared field by field), the table facts, mnesia_table_change_storage, delete_mnesia and
 * mnesia_change_nodename. Progress frames reach servicectl's control socket. Bad files, unknown tables and
 * paths the server must not write get clear errors, and change nothing.
 */
import { createHash } from 'node:crypto';
import { mkdir, readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { expect } from 'chai';
import { api, ok } from '../support/admin-api.js';
import { TestServer } from '../support/server.js';
import { login, stopAll, subscribe, xml, xmppConfig, type Client } from '../support/xmpp.js';
import { fileState, liveState, overControlSocket, readContainer, registrationLoad, type DbState } from './support-embedded.js';

const MODULES = { mod_roster: {}, mod_presence: {}, mod_vcard: { db_type: 'mnesia' }, mod_admin_extra: {}, mod_muc: {}, mod_muc_admin: {} };

/**
 * The state without the accounts a registration load made (user names starting with `prefix`). Matched on the
 * username column: a bare `"bf` also matched base64 SCRAM keys that happen to start with those letters, which
 * dropped an unrelated account from one side of a comparison now and then.
 */
function withoutLoad(state: DbState, prefix: string): DbState {
  return { ...state, users: state.users!.filter((row) => !row.includes(`["username","${prefix}`)) };
}

/**
 * The rows that differ between two states, table by table ("store.table: +row" for a row only in `actual`,
 * "-row" for one only in `expected`): an assertion on it names what changed, where a deep equality of two large
 * objects prints no usable diff.
 */
function changedRows(actual: Record<string, DbState>, expected: Record<string, DbState>): string[] {
  const out: string[] = [];
  for (const store of new Set([...Object.keys(actual), ...Object.keys(expected)])) {
    const a = actual[store] ?? {};
    const e = expected[store] ?? {};
    for (const table of new Set([...Object.keys(a), ...Object.keys(e)])) {
      const ar = a[table] ?? [];
      const er = e[table] ?? [];
      for (const row of ar) if (!er.includes(row)) out.push(`${store}.${table}: +${row}`);
      for (const row of er) if (!ar.includes(row)) out.push(`${store}.${table}: -${row}`);
      if (!(table in a) || !(table in e)) out.push(`${store}.${table}: table ${table in a ? 'added' : 'gone'}`);
    }
  }
  return out;
}

describe('embedded database commands (mnesia family)', function () {
  this.timeout(180_000);
  let t: TestServer;
  let alice: Client | undefined;
  let bob: Client | undefined;
  const data = () => join(t.dir, 'data');
  const sql = () => t.server.services.storage.db('sql');
  const mnesia = () => t.server.services.storage.db('mnesia');
  const state = async () => ({ sql: await liveState(sql()), mnesia: await liveState(mnesia()) });

  before(async () => {
    t = await TestServer.start(xmppConfig(MODULES));
    await t.bootstrapAdmin();
    for (const user of ['alice', 'bob', 'carol']) await t.register(user, 'localhost', `${user}-pw`);
    await t.register('erin', 'example.com', 'erin-pw');
    alice = await login(t, { user: 'alice', password: 'alice-pw', resource: 'a' });
    bob = await login(t, { user: 'bob', password: 'bob-pw', resource: 'b' });
    await Promise.all([alice.send(xml('presence')), bob.send(xml('presence'))]);
    await subscribe(bob, 'bob@localhost', alice, 'alice@localhost');
    await alice.iqCaller.request(xml('iq', { type: 'set' }, xml('vCard', { xmlns: 'vcard-temp' }, xml('FN', {}, 'Alice Liddell'))));
    await ok(t, 'add_rosteritem', { localuser: 'erin', localhost: 'example.com', user: 'alice', host: 'localhost', nick: 'Al', groups: ['Friends'], subs: 'both' });
  });

  after(async () => {
    await stopAll(alice, bob);
    await t?.stop();
  });

  describe('tables', () => {
    it('mnesia_list_tables: every table of both stores with its storage type, rows and size', async () => {
      const tables = (await ok(t, 'mnesia_list_tables', {})) as Array<{ name: string; storage_type: string; elements: number; memory_kb: number; memory_mb: number }>;
      const byName = new Map(tables.map((x) => [x.name, x]));
      const users = await sql()('users').count({ n: '*' });
      expect(byName.get('users')).to.deep.include({ storage_type: 'disc_copies', elements: Number(users[0]!.n), memory_mb: 0 });
      expect(byName.get('users')!.memory_kb).to.be.above(0);
      // vCards are in the embedded store; schema_migrations is in both, so it is named per store.
      expect(byName.get('vcards')?.elements).to.equal(1);
      expect(byName.has('sql.schema_migrations') && byName.has('mnesia.schema_migrations')).to.equal(true);
      for (const x of tables) expect(Object.keys(x).sort()).to.deep.equal(['elements', 'memory_kb', 'memory_mb', 'name', 'storage_type']);
    });

    it('mnesia_table_info and mnesia_info describe the SQLite files; an unknown table is named in a 404', async () => {
      const text = (await ok(t, 'mnesia_table_info', { table: 'roster_items' })) as string;
      const rosterRows = Number((await sql()('roster_items').count({ n: '*' }))[0]!.n);
      expect(text).to.include('name: roster_items').and.include(`store: sql (${join(data(), 'service.db')})`).and.include('storage_type: disc_copies').and.include(`elements: ${rosterRows}`);
      expect(await ok(t, 'mnesia_table_info', { table: 'mnesia.schema_migrations' })).to.include('store: mnesia');
      const ambiguous = await api(t, 'mnesia_table_info', { table: 'schema_migrations' });
      expect(ambiguous.status).to.equal(400);
      expect(ambiguous.body.message).to.include('sql.schema_migrations or mnesia.schema_migrations');
      const unknown = await api(t, 'mnesia_table_info', { table: 'nosuch' });
      expect(unknown.status).to.equal(404);
      expect(unknown.body.message).to.match(/unknown table 'nosuch'; the tables are: .*roster/);
      const info = (await ok(t, 'mnesia_info', {})) as string;
      expect(info).to.include(`sql store: ${join(data(), 'service.db')}`).and.include(`mnesia store: ${join(data(), 'embedded.db')}`).and.include('journal_mode wal');
    });

    it('mnesia_table_change_storage: disc_copies is what every table is; the others are refused, changing nothing', async () => {
      expect(await ok(t, 'mnesia_table_change_storage', { table: 'roster_items', storage_type: 'disc_copies' })).to.equal('Table roster_items already has storage type disc_copies: nothing to change');
      const ram = await api(t, 'mnesia_table_change_storage', { table: 'roster_items', storage_type: 'ram_copies' });
      expect(ram.status).to.equal(422);
      expect(ram.body.message).to.match(/storage type ram_copies is not available for table roster_items: .*Nothing was changed/);
      const bogus = await api(t, 'mnesia_table_change_storage', { table: 'roster_items', storage_type: 'tape' });
      expect(bogus.status).to.equal(400);
      expect(bogus.body.message).to.include("unknown storage_type 'tape': expected ram_copies, disc_copies, disc_only_copies");
      expect((await api(t, 'mnesia_table_change_storage', { table: 'nosuch', storage_type: 'disc_copies' })).status).to.equal(404);
    });
  });

  describe('backup and restore', () => {
    const backupFile = () => join(t.dir, 'one.backup');

    it('backup: a consistent online image while accounts are being registered, 0600, with progress', async () => {
      const load = registrationLoad(t, 'bk');
      await new Promise((r) => setTimeout(r, 200));
      const began = Date.now();
      const { progress, final } = await overControlSocket(t, 'backup', [backupFile()]);
      const registered = await load.stop();
      expect(final.type, JSON.stringify(final)).to.equal('result');
      expect(final.result).to.match(new RegExp(`^Backup of sql \\(\\d+ tables, \\d+ rows\\), mnesia \\(\\d+ tables, \\d+ rows\\) written to ${backupFile()}$`));
      expect(progress.length).to.be.at.least(1);
      expect(progress[0]!.label).to.match(/^pages of the (sql|mnesia) database copied$/);
      expect((await stat(backupFile())).mode & 0o777).to.equal(0o600);

      const { manifest, images } = await readContainer(backupFile());
      expect(manifest).to.deep.include({ format: 'service-db-backup', version: 1, node: t.server.services.config().node_name });
      expect(manifest.parts.map((p) => p.store)).to.deep.equal(['sql', 'mnesia']);
      for (const part of manifest.parts) expect(createHash('sha256').update(images[part.store]!).digest('hex')).to.equal(part.sha256);
      await writeFile(join(t.dir, 'img-sql.db'), images.sql!);
      await writeFile(join(t.dir, 'img-mnesia.db'), images.mnesia!);
      const image = fileState(join(t.dir, 'img-sql.db'));
      // Every account whose registration had finished before the backup began is in it, with its roster.
      for (const { user } of registered.filter((r) => r.began < began - 1000)) expect(image.users!.some((row) => row.includes(`"${user}"`)), user).to.equal(true);
      expect(image.users!.filter((row) => row.includes('"alice"'))).to.have.length(1);
      expect(image.roster_items).to.deep.equal((await liveState(sql())).roster_items);
      expect(fileState(join(t.dir, 'img-mnesia.db')).vcards).to.deep.equal((await liveState(mnesia())).vcards);
    });

    it('restore under load: the backup comes back field by field, only the load adds rows; sessions go on or end cleanly', async () => {
      const expected = { sql: fileState(join(t.dir, 'img-sql.db')), mnesia: fileState(join(t.dir, 'img-mnesia.db')) };
      // Changes after the backup that the restore must undo: carol goes, dave comes and logs in, alice renames herself.
      await ok(t, 'unregister', { user: 'carol', host: 'localhost' });
      await t.register('dave', 'localhost', 'dave-pw');
      const dave = await login(t, { user: 'dave', password: 'dave-pw', resource: 'd' });
      const daveErrors: string[] = [];
      dave.on('error', (err: any) => daveErrors.push(String(err?.condition ?? err?.message)));
      await alice!.iqCaller.request(xml('iq', { type: 'set' }, xml('vCard', { xmlns: 'vcard-temp' }, xml('FN', {}, 'Alice Changed'))));
      expect((await liveState(mnesia())).vcards).to.not.deep.equal(expected.mnesia.vcards);

      const load = registrationLoad(t, 'rs');
      await new Promise((r) => setTimeout(r, 200));
      const { progress, final } = await overControlSocket(t, 'restore', [backupFile()]);
      await new Promise((r) => setTimeout(r, 200));
      const registered = new Set((await load.stop()).map((r) => r.user));
      expect(registered.size, 'the load registered accounts around the restore').to.be.above(0);
      expect(final.type, JSON.stringify(final)).to.equal('result');
      expect(final.result).to.match(/^Restored sql \(\d+ tables, \d+ rows\), mnesia \(\d+ tables, \d+ rows\) from .*; 1 session\(s\) of accounts the backup does not have were closed$/);
      expect(progress.at(-1)!.label).to.equal('rows restored');
      expect(progress.at(-1)!.done).to.equal(progress.at(-1)!.total);

      const now = await state();
      // Every table but users is exactly the backup's; users is the backup's plus accounts the load registered.
      expect(withoutLoad(now.sql, 'rs')).to.deep.equal(expected.sql);
      expect(now.mnesia).to.deep.equal(expected.mnesia);
      const extra = now.sql.users!.filter((row) => !expected.sql.users!.includes(row));
      for (const row of extra) expect([...registered].some((u) => row.includes(`"${u}"`)), row).to.equal(true);

      // alice (in the backup) is still connected and served from the restored data; dave (not in it) was cut off.
      const vcard = await alice!.iqCaller.request(xml('iq', { type: 'get' }, xml('vCard', { xmlns: 'vcard-temp' })));
      expect(vcard.getChild('vCard', 'vcard-temp')!.getChildText('FN')).to.equal('Alice Liddell');
      for (let i = 0; i < 50 && !daveErrors.length; i++) await new Promise((r) => setTimeout(r, 100));
      expect(daveErrors).to.include('not-authorized');
      expect((await api(t, 'check_account', { user: 'carol', host: 'localhost' })).body).to.equal(0);
      await stopAll(dave);
    });

    it('install_fallback: checked now, restored at the next start (logged)', async () => {
      const before = await liveState(sql());
      await ok(t, 'unregister', { user: 'bob', host: 'localhost' });
      expect(await ok(t, 'install_fallback', { file: backupFile() })).to.match(/^Fallback installed from .*: it is restored at the next start/);
      expect((await stat(join(data(), 'fallback.bak'))).mode & 0o777).to.equal(0o600);
      expect((await api(t, 'check_account', { user: 'bob', host: 'localhost' })).body).to.equal(1);
      await stopAll(alice, bob);
      alice = bob = undefined;
      expect((await t.api('restart', {}, { basic: 'admin@localhost:adminpass' })).body).to.equal(0);
      for (let i = 0; i < 100 && !t.logged((l) => /^fallback restored at start/.test(String(l.msg))).length; i++) await new Promise((r) => setTimeout(r, 100));
      for (let i = 0; i < 100 && t.server.status !== 'started'; i++) await new Promise((r) => setTimeout(r, 100));
      expect(t.logged((l) => /^fallback restored at start/.test(String(l.msg)))).to.have.length(1);
      const after = withoutLoad(await liveState(sql()), 'rs');
      // The nodes table records this start: everything else is the backup's.
      expect({ ...after, nodes: [] }).to.deep.equal({ ...fileState(join(t.dir, 'img-sql.db')), nodes: [] });
      expect(before.users!.length).to.be.above(0);
      await stat(join(data(), 'fallback.bak')).then(
        () => expect.fail('fallback.bak is still there'),
        () => undefined,
      );
      alice = await login(t, { user: 'alice', password: 'alice-pw', resource: 'a' });
      bob = await login(t, { user: 'bob', password: 'bob-pw', resource: 'b' });
    });
  });

  describe('dump and load', () => {
    it('dump under load, then load it back: every table field by field, all in one transaction', async () => {
      const load = registrationLoad(t, 'dl');
      await new Promise((r) => setTimeout(r, 200));
      const file = join(t.dir, 'all.dump');
      const { progress, final } = await overControlSocket(t, 'dump', [file]);
      await load.stop();
      expect(final.type, JSON.stringify(final)).to.equal('result');
      expect(final.result).to.match(/^Dumped \d+ tables \(\d+ rows\) to /);
      expect(progress.some((p) => p.label === 'rows dumped')).to.equal(true);
      expect((await stat(file)).mode & 0o777).to.equal(0o600);
      const lines = (await readFile(file, 'utf8')).trimEnd().split('\n').map((l) => JSON.parse(l));
      expect(lines[0]).to.deep.include({ format: 'service-dump', version: 1 });
      expect(lines.at(-1)).to.deep.include({ end: true });
      const tableLines = lines.filter((l) => !Array.isArray(l) && l.table);
      expect(tableLines.find((l) => l.table === 'vcards')).to.deep.include({ store: 'mnesia' });

      // What the dump holds, read back from its lines: the state to come back after load.
      const dumped = await liveState(sql());
      await ok(t, 'unregister', { user: 'carol', host: 'localhost' });
      await ok(t, 'delete_rosteritem', { localuser: 'erin', localhost: 'example.com', user: 'alice', host: 'localhost' });
      await alice!.iqCaller.request(xml('iq', { type: 'set' }, xml('vCard', { xmlns: 'vcard-temp' }, xml('FN', {}, 'Changed Again'))));
      const vcardBefore = (await liveState(mnesia())).vcards;
      const loaded = await overControlSocket(t, 'load', [file]);
      expect(loaded.final.type, JSON.stringify(loaded.final)).to.equal('result');
      expect(loaded.final.result).to.match(/^Loaded \d+ tables \(\d+ rows\) from /);
      expect(loaded.progress.at(-1)).to.deep.include({ label: 'rows loaded' });
      const now = await liveState(sql());
      // The load's accounts registered after the dump was taken are gone; everything else is as it was.
      const dumpRows = (table: string) => {
        const start = lines.findIndex((l) => !Array.isArray(l) && l.table === table && l.store === 'sql');
        const out: unknown[][] = [];
        for (let i = start + 1; i < lines.length && Array.isArray(lines[i]); i++) out.push(lines[i]);
        return { columns: lines[start].columns as string[], rows: out };
      };
      for (const table of Object.keys(now).filter((x) => x !== 'schema_migrations')) {
        const { columns, rows } = dumpRows(table);
        const fromDump = rows.map((r) => JSON.stringify(columns.map((c, i) => [c, r[i]]).sort((a, b) => String(a[0]).localeCompare(String(b[0]))))).sort();
        expect(now[table], table).to.deep.equal(fromDump);
      }
      expect(now.roster_items).to.deep.equal(dumped.roster_items);
      expect((await liveState(mnesia())).vcards).to.not.deep.equal(vcardBefore);
      const vcard = await alice!.iqCaller.request(xml('iq', { type: 'get' }, xml('vCard', { xmlns: 'vcard-temp' })));
      expect(vcard.getChild('vCard', 'vcard-temp')!.getChildText('FN')).to.equal('Alice Liddell');
    });

    it('dump_table writes one table; load of it replaces that table only', async () => {
      const file = join(t.dir, 'roster.dump');
      const rosterRows = Number((await sql()('roster_items').count({ n: '*' }))[0]!.n);
      expect(rosterRows).to.be.above(0);
      expect(await ok(t, 'dump_table', { file, table: 'roster_items' })).to.equal(`Dumped table roster_items (${rosterRows} rows) to ${file}`);
      const lines = (await readFile(file, 'utf8')).trimEnd().split('\n').map((l) => JSON.parse(l));
      expect(lines).to.have.length(rosterRows + 3);
      expect(lines[1]).to.deep.include({ store: 'sql', table: 'roster_items', rows: rosterRows });
      const before = await state();
      await ok(t, 'delete_rosteritem', { localuser: 'erin', localhost: 'example.com', user: 'alice', host: 'localhost' });
      await t.register('frank', 'localhost', 'frank-pw');
      expect(await ok(t, 'load', { file })).to.equal(`Loaded 1 tables (${rosterRows} rows) from ${file}`);
      const after = await state();
      expect(after.sql.roster_items).to.deep.equal(before.sql.roster_items);
      expect(after.sql.users!.length).to.equal(before.sql.users!.length + 1);
      expect((await api(t, 'dump_table', { file, table: 'nosuch' })).status).to.equal(404);
    });
  });

  describe('delete_mnesia and mnesia_change_nodename', () => {
    it("delete_mnesia removes one vhost's rows from every table, and ends its sessions", async () => {
      const erin = await login(t, { user: 'erin', password: 'erin-pw', host: 'example.com', resource: 'e' });
      const errors: string[] = [];
      erin.on('error', (err: any) => errors.push(String(err?.condition ?? err?.message)));
      // Persistent rooms of each host's MUC service: rows with a `service` column, no `host`.
      for (const [host, room] of [['example.com', 'eroom'], ['localhost', 'lroom']]) {
        await ok(t, 'create_room_with_opts', { room, service: `conference.${host}`, host, options: [{ name: 'persistent', value: 'true' }] });
      }
      const rooms = async () => ((await sql()('muc_rooms').select('service', 'name').orderBy('name')) as Array<{ service: string; name: string }>).map((r) => `${r.name}@${r.service}`);
      expect(await rooms()).to.deep.equal(['eroom@conference.example.com', 'lroom@conference.localhost']);
      const before = await liveState(sql());
      expect(before.users!.some((r) => r.includes('"example.com"'))).to.equal(true);
      const { progress, final } = await overControlSocket(t, 'delete_mnesia', ['example.com']);
      expect(final, JSON.stringify(final)).to.deep.include({ type: 'result', result: 0 });
      expect(progress.at(-1)).to.deep.include({ label: 'rows deleted' });
      const after = await liveState(sql());
      for (const [table, rows] of Object.entries(after)) {
        expect(rows.filter((r) => r.includes('["host","example.com"]')), table).to.deep.equal([]);
        expect(rows.filter((r) => r.includes('["host","localhost"]')), table).to.deep.equal(before[table]!.filter((r) => r.includes('["host","localhost"]')));
      }
      expect(await rooms()).to.deep.equal(['lroom@conference.localhost']);
      for (let i = 0; i < 50 && !errors.length; i++) await new Promise((r) => setTimeout(r, 100));
      expect(errors).to.include('not-authorized');
      await stopAll(erin);
      const unknown = await api(t, 'delete_mnesia', { host: 'nowhere.example' });
      expect(unknown.status).to.equal(404);
      expect(unknown.body.message).to.include("unknown host 'nowhere.example'");
    });

    it('mnesia_change_nodename writes a copy of a backup with the node renamed, leaving the old one as it was', async () => {
      const old = join(t.dir, 'node.backup');
      const renamed = join(t.dir, 'renamed.backup');
      await ok(t, 'backup', { file: old });
      const node = t.server.services.config().node_name;
      const oldBytes = await readFile(old);
      expect(await ok(t, 'mnesia_change_nodename', { oldnodename: node, newnodename: 'service@elsewhere', oldbackup: old, newbackup: renamed })).to.equal(
        `Backup ${old} written as ${renamed} with node ${node} renamed service@elsewhere`,
      );
      expect(await readFile(old)).to.deep.equal(oldBytes);
      const { manifest, images } = await readContainer(renamed);
      expect(manifest.node).to.equal('service@elsewhere');
      await writeFile(join(t.dir, 'renamed-sql.db'), images.sql!);
      const nodes = fileState(join(t.dir, 'renamed-sql.db')).nodes!;
      expect(nodes.some((r) => r.includes('"service@elsewhere"'))).to.equal(true);
      expect(nodes.some((r) => r.includes(`"${node}"`))).to.equal(false);
      expect((await stat(renamed)).mode & 0o777).to.equal(0o600);
      const missing = await api(t, 'mnesia_change_nodename', { oldnodename: 'nobody@nowhere', newnodename: 'x@y', oldbackup: old, newbackup: join(t.dir, 'x.backup') });
      expect(missing.status).to.equal(404);
      expect(missing.body.message).to.include("no node named 'nobody@nowhere'");
      await stat(join(t.dir, 'x.backup')).then(() => expect.fail('written anyway'), () => undefined);
    });
  });

  describe('bad files and paths change nothing', () => {
    it('backup and dump refuse paths the server must not write, with the reason', async () => {
      await mkdir(join(t.dir, 'adir'), { recursive: true });
      const cases: Array<[string, Record<string, string>, number, RegExp]> = [
        ['backup', { file: join(t.dir, 'adir') }, 400, /is a directory; give a file name/],
        ['backup', { file: 'service.db' }, 400, /is one of the server's own database files/],
        ['backup', { file: 'embedded.db-wal' }, 400, /is one of the server's own database files/],
        ['dump', { file: '/proc/self/environ' }, 400, /does not write under \/proc/],
        ['dump', { file: join(t.dir, 'no', 'such', 'dir', 'x.dump') }, 400, /the directory .* does not exist/],
        ['backup', { file: '' }, 400, /must be a file path/],
      ];
      for (const [command, args, status, message] of cases) {
        const res = await api(t, command, args);
        expect(res.status, `${command} ${JSON.stringify(args)}: ${JSON.stringify(res.body)}`).to.equal(status);
        expect(res.body.message).to.match(message);
      }
    });

    it('restore, install_fallback and load refuse bad files clearly and leave the data as it was, under load', async () => {
      const before = await state();
      const load = registrationLoad(t, 'bf');
      const good = join(t.dir, 'good.backup');
      await ok(t, 'backup', { file: good });
      const bytes = await readFile(good);
      const garbage = join(t.dir, 'garbage.bin');
      await writeFile(garbage, 'not a backup at all\n');
      const truncated = join(t.dir, 'truncated.backup');
      await writeFile(truncated, bytes.subarray(0, bytes.length - 100));
      const flipped = join(t.dir, 'flipped.backup');
      const damaged = Buffer.from(bytes);
      damaged[damaged.length - 5000] = damaged[damaged.length - 5000]! ^ 0xff;
      await writeFile(flipped, damaged);
      const dumpFile = join(t.dir, 'ok.dump');
      await ok(t, 'dump', { file: dumpFile });
      const dumpText = await readFile(dumpFile, 'utf8');
      const cutDump = join(t.dir, 'cut.dump');
      await writeFile(cutDump, dumpText.split('\n').slice(0, -3).join('\n') + '\n');
      const unknownTable = join(t.dir, 'unknown-table.dump');
      await writeFile(unknownTable, dumpText.replace('"table":"roster_items"', '"table":"no_such_table"'));
      const badRow = join(t.dir, 'bad-row.dump');
      const rows = dumpText.split('\n');
      const rowIndex = rows.findIndex((l, i) => i > 1 && l.startsWith('['));
      rows[rowIndex] = '[1]';
      await writeFile(badRow, rows.join('\n'));
      // A backup that passes every check but breaks a foreign key: found inside the restore's transaction, which is rolled back.
      const broken = join(t.dir, 'broken-fk.backup');
      const { manifest, images } = await readContainer(good);
      const imageFile = join(t.dir, 'broken-sql.db');
      await writeFile(imageFile, images.sql!);
      const image = new Database(imageFile);
      image.exec('PRAGMA foreign_keys = OFF; CREATE TABLE fk_parent (id INTEGER PRIMARY KEY); CREATE TABLE fk_child (pid INTEGER REFERENCES fk_parent(id)); INSERT INTO fk_child VALUES (42);');
      image.close();
      const brokenImage = await readFile(imageFile);
      const parts = manifest.parts.map((p) => (p.store === 'sql' ? { ...p, bytes: brokenImage.length, sha256: createHash('sha256').update(brokenImage).digest('hex') } : p));
      await writeFile(broken, Buffer.concat([Buffer.from(`SERVICE-DB-BACKUP 1\n${JSON.stringify({ ...manifest, parts })}\n`), brokenImage, images.mnesia!]));

      const cases: Array<[string, string, number, RegExp]> = [
        ['restore', broken, 422, /the new sql data breaks 1 foreign key reference\(s\); nothing was changed/],
        ['restore', garbage, 422, /is not a usable backup: it does not start with "SERVICE-DB-BACKUP 1"; nothing was changed/],
        ['restore', truncated, 422, /truncated or appended to/],
        ['restore', flipped, 422, /does not match its sha256 \(the file is damaged\)/],
        ['restore', dumpFile, 422, /it looks like a text dump: use load/],
        ['restore', join(data(), 'service.db'), 400, /one of the server's live database files/],
        ['restore', join(t.dir, 'missing.backup'), 404, /does not exist/],
        ['install_fallback', truncated, 422, /truncated or appended to/],
        ['load', good, 422, /line 1: not a text dump made by the dump command/],
        ['load', cutDump, 422, /has no end line: it is truncated; nothing was changed|announced \d+ rows but has \d+/],
        ['load', unknownTable, 422, /unknown table 'no_such_table' in the sql store/],
        ['load', badRow, 422, new RegExp(`line ${rowIndex + 1}: a row of 1 values where table \\w+ has \\d+ columns`)],
      ];
      for (const [command, file, status, message] of cases) {
        const res = await api(t, command, { file });
        expect(res.status, `${command} ${file}: ${JSON.stringify(res.body)}`).to.equal(status);
        expect(res.body.message).to.match(message);
      }
      await stat(join(data(), 'fallback.bak')).then(() => expect.fail('a bad fallback was installed'), () => undefined);
      expect((await load.stop()).length, 'the load ran').to.be.above(0);
      const after = await state();
      const changed = changedRows({ ...after, sql: withoutLoad(after.sql, 'bf') }, before);
      expect(changed, changed.join('\n')).to.deep.equal([]);
    });
  });
});
